import type { ClaimRequest, ListedAs, OrderClaim } from "./claim.js";

/**
 * A claim as mode flags: the form `ClaimRequest` had before its named claims (`kind`), several of
 * whose combinations meant nothing. The built-in stores' Lua scripts and SQL still take a claim in
 * this form (their wire format, which running deployments share), and a store written against the
 * old `ClaimRequest` reads it: `claimFlags` turns a named claim into it.
 */
export interface ClaimFlags {
  id: string;
  fingerprint: string;
  owner: string;
  leaseMs: number;
  /** A worker's take (`take`); with `forQueue`, a receiver's take-over (`takeOver`). */
  takeQueued?: boolean;
  order?: OrderClaim;
  /** `TakeClaim.handoffFrom`. */
  handoffFrom?: string;
  /** A receiver's claim for a durable queue: `enqueue`, or with `order`, `append`. */
  forQueue?: boolean;
  /** `EnqueueClaim.queueAtClaim`. */
  queueAtClaim?: boolean;
  /** `AppendClaim.carried`; without `forQueue` and `order`, `RunClaim.carried`. */
  carried?: string;
  handlerTimeoutMs?: number;
  /** `TakeClaim.attempt`. */
  attempt?: number;
  listedAs?: ListedAs;
}

const LEGACY_FLAGS = ["takeQueued", "forQueue", "queueAtClaim", "handoffFrom", "carried"] as const;

/** A request without `kind` that carries a mode flag: written against `ClaimFlags`. */
const isLegacy = (request: ClaimRequest | ClaimFlags): request is ClaimFlags =>
  !("kind" in request && request.kind !== undefined) && LEGACY_FLAGS.some((flag) => flag in request);

/**
 * A named claim as mode flags: how the built-in stores' scripts and SQL have taken a claim since
 * before the named claims (their wire format stays, for running deployments), and what a store
 * written against `ClaimFlags` reads: `claim: (request) => legacyClaim(claimFlags(request))`.
 * A request already in flags (from JavaScript that predates `kind`) is given back as it is.
 */
export function claimFlags(request: ClaimRequest | ClaimFlags): ClaimFlags {
  if (isLegacy(request)) return request;
  const { id, fingerprint, owner, leaseMs, handlerTimeoutMs, listedAs } = request;
  const flags: ClaimFlags = { id, fingerprint, owner, leaseMs };
  if (handlerTimeoutMs !== undefined) flags.handlerTimeoutMs = handlerTimeoutMs;
  if (listedAs !== undefined) flags.listedAs = listedAs;
  switch (request.kind) {
    case undefined:
    case "run":
      if (request.order) flags.order = request.order;
      else if (request.carried !== undefined) flags.carried = request.carried;
      return flags;
    case "enqueue":
      flags.forQueue = true;
      if (request.queueAtClaim) flags.queueAtClaim = true;
      if (request.takeOver) flags.takeQueued = true;
      return flags;
    case "append":
      flags.forQueue = true;
      flags.order = request.order;
      if (request.carried !== undefined) flags.carried = request.carried;
      if (request.takeOver) flags.takeQueued = true;
      return flags;
    case "take":
      flags.takeQueued = true;
      if (request.order) flags.order = request.order;
      if (request.handoffFrom !== undefined) flags.handoffFrom = request.handoffFrom;
      if (request.attempt !== undefined) flags.attempt = request.attempt;
      return flags;
  }
}
