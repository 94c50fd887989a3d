/**
 * A 128-bit digest of a parsed JSON value, computed in one walk of it: no sorted copy, no text. It is
 * the inside of the payload fingerprint (`fingerprint.ts` signs it with an HMAC), and it decides equal
 * exactly what the canonical JSON text (`canonicalJson`: keys sorted, `JSON.stringify`'s spelling of
 * strings and numbers) decides equal, so a sender that re-serialises a retry (key order, spacing,
 * escapes, `1.0` for `1`) still sends the same payload.
 *
 * How the parts are combined, and why each cannot be confused with another:
 * - every node's digest is MurmurHash3's x86 128-bit construction over four 32-bit lanes, started from
 *   seeds derived from the fingerprint key, and finished with the node's kind (string, integer, float,
 *   true, false, null, member, array, object) and its length folded in: the finish is a bijection of
 *   the lanes for a given kind and length, so `"1"` and `1`, `[]` and `{}`, `[x]` and `{"0": x}` differ
 *   by construction, not by chance;
 * - a number's digest is its IEEE-754 bits (`-0` as `0`, as `JSON.stringify` writes both `0`), or for a
 *   32-bit integer the integer under its own kind: two numbers share a text exactly when they share
 *   a double, so the digest is exact for numbers, with no collision at all;
 * - an array hashes its items' digests in order;
 * - an object member is one stream: the key's code units, then the value's code units (a string) or
 *   its 16-byte digest (an array or object), finished with the key's length and the value's kind,
 *   length and number words folded in, so no key/value boundary can shift; the object adds its
 *   members' digests lane by lane modulo 2^32: addition does not depend on key order, and unlike XOR
 *   two equal members cannot cancel (they cannot even occur: an object's keys are distinct, and the
 *   key is in each member's digest). The member count is folded into the object's finish.
 *
 * What is left is the chance that two different values' 128-bit digests meet: about 2^-128 for two
 * payloads under one id (2^-65 even among 2^32 of them), far below any sender's mistakes. It is not a
 * cryptographic hash, so a sender could craft two payloads with the same digest; only the sender
 * writes the payloads under its own ids, and such a pair would only turn its own second payload into
 * a duplicate instead of a 422. The HMAC over the digest keeps the stored fingerprint a keyed hash.
 */

/** What `valueDigest` answers when, given a `maxDepth`, its walk stopped (see there). */
export const STOPPED = Symbol("stopped");

/**
 * The walk, its constants and its state live in this function's scope, not at the module's top level:
 * a bundler (esbuild, so tsup) turns every top-level `const` into a `var`, and V8 then reads each
 * constant and typed array of the walk back from the module on every use instead of building it into
 * the optimised code; in the published build that made the digest 1.1 to 1.6 times as costly as the
 * same source run unbundled.
 */
function digestWalk() {
  /** Kinds folded into a digest's finish. */
  const STRING = 1;
  const INTEGER = 2;
  const FLOAT = 3;
  const TRUE = 4;
  const FALSE = 5;
  const NULL = 6;
  /** An array or object value (only as a member's kind: an array or object finishes as ARRAY or OBJECT). */
  const NESTED = 7;
  const ARRAY = 8;
  const OBJECT = 9;
  /** Added to a member value's kind: a member finishes as its own kind of node. */
  const MEMBER = 16;

  const C1 = 0x239b961b;
  const C2 = 0xab0e9789 | 0;
  const C3 = 0x38b34ae5;
  const C4 = 0xa1e38b93 | 0;
  const imul = Math.imul;

  /**
   * The four lanes of the last absorb or finish, read at once by the caller (one typed array, not four
   * return values: the walk allocates nothing per node).
   */
  const LANES = new Int32Array(4);
  /** The seeds of the digest being computed (set by `valueDigest`). */
  const SEEDS = new Int32Array(4);

  /**
   * MurmurHash3 x86_128's body: one 16-byte block (k1..k4) mixed into the lanes h1..h4. The rotations
   * are written out: this must stay small enough for V8 to inline it at each of its calls.
   */
  function absorb(h1: number, h2: number, h3: number, h4: number, k1: number, k2: number, k3: number, k4: number) {
    k1 = imul(k1, C1);
    h1 ^= imul((k1 << 15) | (k1 >>> 17), C2);
    h1 = imul(((h1 << 19) | (h1 >>> 13)) + h2, 5) + 0x561ccd1b;
    k2 = imul(k2, C2);
    h2 ^= imul((k2 << 16) | (k2 >>> 16), C3);
    h2 = imul(((h2 << 17) | (h2 >>> 15)) + h3, 5) + 0x0bcaa747;
    k3 = imul(k3, C3);
    h3 ^= imul((k3 << 17) | (k3 >>> 15), C4);
    h3 = imul(((h3 << 15) | (h3 >>> 17)) + h4, 5) + 0x96cd1c35;
    k4 = imul(k4, C4);
    h4 ^= imul((k4 << 18) | (k4 >>> 14), C1);
    LANES[0] = h1;
    LANES[1] = h2;
    LANES[2] = h3;
    LANES[3] = imul(((h4 << 13) | (h4 >>> 19)) + h1, 5) + 0x32ac3b17;
  }

  function fmix(h: number): number {
    h = imul(h ^ (h >>> 16), 0x85ebca6b);
    h = imul(h ^ (h >>> 13), 0xc2b2ae35);
    return h ^ (h >>> 16);
  }

  /** MurmurHash3 x86_128's finish, with the kind beside the length: a bijection of the lanes for each (kind, length). */
  function finish(h1: number, h2: number, h3: number, h4: number, length: number, kind: number) {
    h1 ^= length;
    h2 ^= kind;
    h1 = (h1 + h2 + h3 + h4) | 0;
    h1 = fmix(h1);
    h2 = fmix((h2 + h1) | 0);
    h3 = fmix((h3 + h1) | 0);
    h4 = fmix((h4 + h1) | 0);
    h1 = (h1 + h2 + h3 + h4) | 0;
    LANES[0] = h1;
    LANES[1] = h2 + h1;
    LANES[2] = h3 + h1;
    LANES[3] = h4 + h1;
  }

  /**
   * A string's UTF-16 code units absorbed into the lanes (the seeds' with `fromSeeds`, else LANES'),
   * two to a 32-bit word, eight to a block, the last block zero-padded, the lanes left in LANES; not
   * finished (the caller folds in the lengths and the kind).
   */
  function absorbUnits(text: string, fromSeeds: boolean) {
    const lanes = fromSeeds ? SEEDS : LANES;
    let h1 = lanes[0]!;
    let h2 = lanes[1]!;
    let h3 = lanes[2]!;
    let h4 = lanes[3]!;
    const length = text.length;
    for (let i = 0; i < length; i += 8) {
      let k1: number;
      let k2: number;
      let k3: number;
      let k4: number;
      if (i + 8 <= length) {
        k1 = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
        k2 = text.charCodeAt(i + 2) | (text.charCodeAt(i + 3) << 16);
        k3 = text.charCodeAt(i + 4) | (text.charCodeAt(i + 5) << 16);
        k4 = text.charCodeAt(i + 6) | (text.charCodeAt(i + 7) << 16);
      } else {
        // The last 1 to 7 units, read one by one: reading past the end would cost the loop its
        // optimised code. Most keys and values are this short, so this is the common path.
        const left = length - i;
        k1 = text.charCodeAt(i) | (left > 1 ? text.charCodeAt(i + 1) << 16 : 0);
        k2 = left > 2 ? text.charCodeAt(i + 2) | (left > 3 ? text.charCodeAt(i + 3) << 16 : 0) : 0;
        k3 = left > 4 ? text.charCodeAt(i + 4) | (left > 5 ? text.charCodeAt(i + 5) << 16 : 0) : 0;
        k4 = left > 6 ? text.charCodeAt(i + 6) : 0;
      }
      // One call of `absorb`, so that V8 inlines it: it is most of what V8 inlines into one function.
      absorb(h1, h2, h3, h4, k1, k2, k3, k4);
      h1 = LANES[0]!;
      h2 = LANES[1]!;
      h3 = LANES[2]!;
      h4 = LANES[3]!;
    }
    if (length === 0) {
      LANES[0] = h1;
      LANES[1] = h2;
      LANES[2] = h3;
      LANES[3] = h4;
    }
  }

  /**
   * Keys' streams from the seeds (their lanes before a value is absorbed), kept by a slot of the key's
   * length and end units: a payload repeats the same few keys in every object, and JSON.parse makes
   * each one string, so a key is found by identity, without reading it again. The slots depend on the
   * seeds and are emptied when they change. Keys longer than KEY_KEPT units are not kept, so the cache
   * holds at most a few kilobytes of a payload's text; nor are keys with a digit, so no card number or
   * verification code a sender put in a key outlives its request (the keys that repeat are names).
   */
  const KEY_SLOTS = 256;
  const KEY_KEPT = 64;
  const cachedKeys: string[] = new Array<string>(KEY_SLOTS).fill("");
  const cachedLanes = new Int32Array(KEY_SLOTS * 4);

  /** A member key's code units absorbed from the seeds, the lanes left in LANES (`absorbUnits(key, true)`). */
  function absorbKey(key: string) {
    const length = key.length;
    // The empty key is the slots' mark of a free slot.
    if (length === 0 || length > KEY_KEPT) {
      absorbUnits(key, true);
      return;
    }
    const slot = (length * 7 + key.charCodeAt(0) * 3 + key.charCodeAt(length - 1)) & (KEY_SLOTS - 1);
    const at = slot * 4;
    if (cachedKeys[slot] === key) {
      LANES[0] = cachedLanes[at]!;
      LANES[1] = cachedLanes[at + 1]!;
      LANES[2] = cachedLanes[at + 2]!;
      LANES[3] = cachedLanes[at + 3]!;
      return;
    }
    absorbUnits(key, true);
    if (holdsDigit(key)) return;
    cachedKeys[slot] = key;
    cachedLanes[at] = LANES[0]!;
    cachedLanes[at + 1] = LANES[1]!;
    cachedLanes[at + 2] = LANES[2]!;
    cachedLanes[at + 3] = LANES[3]!;
  }

  function holdsDigit(key: string): boolean {
    for (let i = 0; i < key.length; i++) {
      const unit = key.charCodeAt(i);
      // ASCII and full-width digits, as the log redaction counts them.
      if ((unit >= 48 && unit <= 57) || (unit >= 0xff10 && unit <= 0xff19)) return true;
    }
    return false;
  }

  /** A number's bytes, little-endian on every platform (the digest must not depend on the CPU). */
  const bits = new DataView(new ArrayBuffer(8));

  /** Returned by the walk for anything that is not plain JSON data (the caller then normalises it). */
  const NOT_PLAIN = false;

  /**
   * Deepest level the walk enters, set by `valueDigest`: finite, the walk also stops at a key the
   * receiver drops (`guarded`), and `stopped` tells the caller why it returned.
   */
  let deepest = Number.POSITIVE_INFINITY;
  let guarded = false;
  let stopped = false;
  /** `Object.prototype` has enumerable properties (something assigned to it): `for...in` then skips them. */
  let inherited = false;
  /**
   * Ask each object for its prototype and its `toJSON`: always for a value another middleware made;
   * for one `JSON.parse` just made (given a `maxDepth`) only when `Object.prototype` has a `toJSON`,
   * since every object it makes is plain, of `Object.prototype`. Both lookups miss V8's caches for
   * every shape of object: they were a sixth of the walk of a parsed body.
   */
  let checkPlain = true;

  /** `value` at nesting level `level` (the top value is level 1). */
  function digestNested(value: object, level: number): boolean {
    if (level > deepest) {
      stopped = true;
      return NOT_PLAIN;
    }
    return Array.isArray(value) ? digestArray(value, level) : digestObject(value as Record<string, unknown>, level);
  }

  /**
   * The digest of `value` into LANES; false when it is not plain JSON data as `JSON.parse` makes it. A
   * scalar finishes from the seeds with its words XORed in (a bijection: numbers never collide) or,
   * for a string, its code units absorbed and its length folded in. A number's words are its 32-bit
   * integer under INTEGER (`-0 | 0` is 0: both write "0"), or its IEEE-754 bits under FLOAT.
   */
  function digest(value: unknown, level: number): boolean {
    let lanes = SEEDS;
    let w1 = 0;
    let w2 = 0;
    let length = 0;
    let kind: number;
    if (typeof value === "string") {
      absorbUnits(value, true);
      lanes = LANES;
      length = value.length;
      kind = STRING;
    } else if (typeof value === "number") {
      if ((value | 0) === value) {
        w1 = value;
        kind = INTEGER;
      } else {
        if (!Number.isFinite(value)) return NOT_PLAIN;
        bits.setFloat64(0, value, true);
        w1 = bits.getInt32(0, true);
        w2 = bits.getInt32(4, true);
        kind = FLOAT;
      }
    } else if (typeof value === "object") {
      if (value !== null) return digestNested(value, level);
      kind = NULL;
    } else if (typeof value === "boolean") {
      kind = value ? TRUE : FALSE;
    } else return NOT_PLAIN;
    finish(lanes[0]! ^ w1, lanes[1]!, lanes[2]! ^ w2, lanes[3]!, length, kind);
    return true;
  }

  function digestArray(array: unknown[], level: number): boolean {
    if (typeof (array as { toJSON?: unknown }).toJSON === "function") return NOT_PLAIN;
    let h1 = SEEDS[0]!;
    let h2 = SEEDS[1]!;
    let h3 = SEEDS[2]!;
    let h4 = SEEDS[3]!;
    const length = array.length;
    for (let i = 0; i < length; i++) {
      if (!(i in array) || !digest(array[i], level + 1)) return NOT_PLAIN;
      absorb(h1, h2, h3, h4, LANES[0]!, LANES[1]!, LANES[2]!, LANES[3]!);
      h1 = LANES[0]!;
      h2 = LANES[1]!;
      h3 = LANES[2]!;
      h4 = LANES[3]!;
    }
    finish(h1, h2, h3, h4, length, ARRAY);
    return true;
  }

  function digestObject(object: Record<string, unknown>, level: number): boolean {
    if (checkPlain) {
      const proto = Object.getPrototypeOf(object);
      if ((proto !== Object.prototype && proto !== null) || typeof object.toJSON === "function") return NOT_PLAIN;
    }
    let sum1 = 0;
    let sum2 = 0;
    let sum3 = 0;
    let sum4 = 0;
    let count = 0;
    // `for...in`, not `Object.keys`: no array of keys per object, and for an object of a shape V8 has
    // listed, each value read by its field index (3 to 6% of the walk).
    for (const key in object) {
      if (inherited && !Object.hasOwn(object, key)) continue;
      count++;
      if (guarded && (key === "__proto__" || key === "constructor")) {
        stopped = true;
        return NOT_PLAIN;
      }
      const item = object[key];
      // One stream per member: the key's code units, then the value's (a string), or the value's own
      // digest (an array or object), finished with the key's length and the value's kind, words and
      // length. Where the key ends is fixed by its length, so no key/value boundary can shift.
      let kind: number;
      let w1 = 0;
      let w2 = 0;
      let length = 0;
      if (typeof item === "string") {
        absorbKey(key);
        absorbUnits(item, false);
        kind = STRING;
        length = item.length;
      } else if (typeof item === "object" && item !== null) {
        if (!digestNested(item, level + 1)) return NOT_PLAIN;
        nestedMember(key);
        kind = NESTED;
      } else {
        if (typeof item === "number") {
          if ((item | 0) === item) {
            kind = INTEGER;
            w1 = item;
          } else {
            if (!Number.isFinite(item)) return NOT_PLAIN;
            kind = FLOAT;
            bits.setFloat64(0, item, true);
            w1 = bits.getInt32(0, true);
            w2 = bits.getInt32(4, true);
          }
        } else if (typeof item === "boolean") kind = item ? TRUE : FALSE;
        else if (item === null) kind = NULL;
        else return NOT_PLAIN;
        absorbKey(key);
      }
      finish(LANES[0]! ^ w1, LANES[1]!, LANES[2]! ^ w2, LANES[3]! ^ length, key.length, kind + MEMBER);
      sum1 = (sum1 + LANES[0]!) | 0;
      sum2 = (sum2 + LANES[1]!) | 0;
      sum3 = (sum3 + LANES[2]!) | 0;
      sum4 = (sum4 + LANES[3]!) | 0;
    }
    LANES[0] = sum1;
    LANES[1] = sum2;
    LANES[2] = sum3;
    LANES[3] = sum4;
    finishObject(count);
    return true;
  }

  /*
   * `nestedMember` and `finishObject` are apart from `digestObject` so that V8 inlines the member's
   * `finish` there: it inlines about 900 bytes of bytecode into one function, and `absorb` and `finish`
   * take 450 and 410. Lanes passed to a call it does not inline are boxed (a heap number for half of
   * all 32-bit values), so these two take theirs in LANES.
   */

  /** A nested member's stream: its key's units, then its value's digest (in LANES). */
  function nestedMember(key: string) {
    const v1 = LANES[0]!;
    const v2 = LANES[1]!;
    const v3 = LANES[2]!;
    const v4 = LANES[3]!;
    absorbKey(key);
    absorb(LANES[0]!, LANES[1]!, LANES[2]!, LANES[3]!, v1, v2, v3, v4);
  }

  /** An object's digest from its members' sums (in LANES). */
  function finishObject(count: number) {
    absorb(SEEDS[0]!, SEEDS[1]!, SEEDS[2]!, SEEDS[3]!, LANES[0]!, LANES[1]!, LANES[2]!, LANES[3]!);
    finish(LANES[0]!, LANES[1]!, LANES[2]!, LANES[3]!, count, OBJECT);
  }

  /** `valueDigest` (below): the walk from the top value, and its digest as bytes. */
  function digestValue(
    value: unknown,
    seeds: DigestSeeds,
    maxDepth = Number.POSITIVE_INFINITY,
  ): Uint8Array | undefined | typeof STOPPED {
    if (SEEDS[0] !== seeds[0] || SEEDS[1] !== seeds[1] || SEEDS[2] !== seeds[2] || SEEDS[3] !== seeds[3]) {
      SEEDS.set(seeds);
      cachedKeys.fill("");
    }
    deepest = maxDepth;
    guarded = maxDepth !== Number.POSITIVE_INFINITY;
    stopped = false;
    inherited = false;
    for (const _ in Object.prototype) inherited = true;
    checkPlain = !guarded || typeof (Object.prototype as { toJSON?: unknown }).toJSON === "function";
    if (!digest(value, 1)) return stopped ? STOPPED : undefined;
    const out = new DataView(new ArrayBuffer(16));
    for (let lane = 0; lane < 4; lane++) out.setInt32(lane * 4, LANES[lane]!, true);
    return new Uint8Array(out.buffer);
  }

  return digestValue;
}

/**
 * The 16-byte digest of `value` (its lanes little-endian) under the four 32-bit `seeds`, or undefined when `value` is not plain
 * JSON data (a `toJSON`, `undefined`, a class instance, a non-finite number: a body another
 * middleware parsed); the caller then digests `JSON.parse(JSON.stringify(value))`, the plain data the
 * canonical text of `value` describes. The walk recurses, so its nesting must be bounded: either known
 * to be (the receiver refuses bodies deeper than its depth limit), or bounded here by `maxDepth` (the
 * top value is level 1). Given a `maxDepth`, `value` must be what `JSON.parse` just returned (its
 * objects are not each asked for their prototype), and the walk is the receiver's check of that body:
 * it answers `STOPPED` at the first level past `maxDepth` and at the first key named `__proto__` or
 * `constructor` (which the receiver drops, `parse-json.ts`), and otherwise vouches that there is
 * neither, so no other walk of the body is needed.
 */
export const valueDigest = digestWalk();

/** The four 32-bit seeds of the digest's lanes. */
export type DigestSeeds = readonly [number, number, number, number];

/** Seeds read from the first 16 bytes of `bytes` (little-endian), as the fingerprint derives them from its key. */
export function digestSeeds(bytes: Uint8Array): DigestSeeds {
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  return [view.getInt32(0, true), view.getInt32(4, true), view.getInt32(8, true), view.getInt32(12, true)];
}
