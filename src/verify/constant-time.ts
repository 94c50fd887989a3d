/**
 * Compare two byte arrays in time that depends only on their length, so a forger cannot learn a valid
 * signature byte by byte from response timing. Lengths are public (every signature of one algorithm
 * has the same length), so unequal lengths return at once.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
