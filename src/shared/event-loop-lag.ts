// How long this process's event loop has been held up: time in which no timer and no socket read of
// ours could run, because the process was busy (a burst of requests) or not scheduled (other work on
// the machine). An answer that arrived in that time sits unread in the socket, so a deadline that
// counts it blames the remote side for our own delay.

/** Sampling interval: the finest delay seen. Short enough to catch a 500 ms deadline's worth many times over. */
const TICK_MS = 10;

let counted = 0;
let expectedAt = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let holders = 0;

function tick(): void {
  const now = performance.now();
  counted += Math.max(0, now - expectedAt);
  schedule(now);
}

function schedule(now: number): void {
  expectedAt = now + TICK_MS;
  timer = setTimeout(tick, TICK_MS);
  // A sampler never keeps the process alive.
  timer.unref();
}

/**
 * Milliseconds of event-loop delay seen so far, a running total: the difference of two readings is the
 * delay between them. It includes the delay still under way (the sampler's own tick overdue now), so a
 * timer that fires late after a stall reads the whole stall, though the sampler has not run since.
 * Measured only while held (`holdLagSampler`); between holds the total does not grow.
 */
export function eventLoopLag(): number {
  return timer ? counted + Math.max(0, performance.now() - expectedAt) : counted;
}

/**
 * Keep the sampler running until the returned function is called: one timer for the whole process,
 * however many hold it, stopped when the last lets go so an idle process wakes up for nothing.
 */
export function holdLagSampler(): () => void {
  if (holders++ === 0) schedule(performance.now());
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders > 0) return;
    counted = eventLoopLag();
    clearTimeout(timer);
    timer = undefined;
  };
}
