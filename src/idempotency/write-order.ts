/** An entry a `WriteOrder` keeps in line: the number of its last write, 0 once it is no longer stored. */
export interface Written {
  written: number;
}

/**
 * The keys of a table in the order they were last written, so expiry and eviction start from the
 * least recently written. A `Map`'s own insertion order would do, but V8 leaves a hole for every
 * deleted key until the table is rebuilt, and every walk from the head steps over all of them: a
 * store at its cap evicts at every write, and its walks cost tens of microseconds per write once
 * 100,000 records had been evicted.
 *
 * Each write appends the key, its entry and the write's number; an item whose entry was written again
 * or dropped since no longer matches its entry's number, and is skipped and let go as the head passes
 * it. The line is rebuilt without those items once they would make up most of it, so it holds at most
 * about twice the table's keys, and each write pays a constant share of the rebuilds.
 */
export class WriteOrder<E extends Written> {
  private keys: (string | undefined)[] = [];
  private entries: (E | undefined)[] = [];
  private stamps: number[] = [];
  private head = 0;
  private writes = 0;

  /** `entry` was just written under `key`; `size` is how many keys the table holds now. */
  wrote(key: string, entry: E, size: number): void {
    entry.written = ++this.writes;
    this.keys.push(key);
    this.entries.push(entry);
    this.stamps.push(entry.written);
    const length = this.keys.length;
    // Rebuilt when the items behind the head, or those ahead of it no longer in the table, would be most of it.
    if ((this.head > 1024 && 2 * this.head > length) || length - this.head > 2 * size + 1024) this.rebuild();
  }

  /** `entry` left the table. */
  dropped(entry: E): void {
    entry.written = 0;
  }

  /** The least recently written entry still in the table (its key is `oldestKey`), if any. */
  oldest(): E | undefined {
    while (this.head < this.keys.length) {
      const entry = this.entries[this.head]!;
      if (entry.written === this.stamps[this.head]) return entry;
      this.keys[this.head] = undefined;
      this.entries[this.head] = undefined;
      this.head++;
    }
    return undefined;
  }

  /** The key of the entry `oldest()` returned. */
  get oldestKey(): string {
    return this.keys[this.head]!;
  }

  private rebuild(): void {
    const keys: string[] = [];
    const entries: E[] = [];
    const stamps: number[] = [];
    for (let i = this.head; i < this.keys.length; i++) {
      const entry = this.entries[i]!;
      if (entry.written !== this.stamps[i]) continue;
      keys.push(this.keys[i]!);
      entries.push(entry);
      stamps.push(this.stamps[i]!);
    }
    this.keys = keys;
    this.entries = entries;
    this.stamps = stamps;
    this.head = 0;
  }
}
