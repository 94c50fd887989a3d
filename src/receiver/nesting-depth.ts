/**
 * Deepest nesting of objects and arrays accepted in a body (the top-level object is level 1). A
 * notification nests about eight levels; the limit leaves room for merchants' metadata while keeping
 * every recursive walk over a payload (redaction, recording, the fingerprint's digest, the parse's
 * own check) far from the stack's limit.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether an already parsed value nests deeper than `max`. Walked with an explicit stack, never
 * recursion. A value met twice (a cycle, or a shared branch) cannot have come from JSON and is refused
 * too, which also keeps the walk linear.
 */
export function valueNestsDeeperThan(value: unknown, max: number): boolean {
  const seen = new WeakSet<object>();
  const stack: Array<{ value: object; depth: number }> = [];
  if (value !== null && typeof value === "object") stack.push({ value, depth: 1 });
  while (stack.length > 0) {
    const { value: node, depth } = stack.pop()!;
    if (depth > max || seen.has(node)) return true;
    seen.add(node);
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

export const TOO_DEEP_MESSAGE = `body is nested deeper than ${MAX_BODY_DEPTH} levels`;
