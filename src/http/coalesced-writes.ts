import { type IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/** Set on a server socket while its finished response waits for the end of the event-loop turn. */
const kHeld = Symbol('stampgate.heldUntilTurnEnd');

interface HoldableSocket extends Socket {
  [kHeld]: boolean;
}

const socketUncork = Socket.prototype.uncork;
const socketDestroy = Socket.prototype.destroy;

/**
 * A server socket's uncork: as usual, except the last level while its finished response is held.
 * Nested pairs still balance: the next pipelined answer may take the socket before the flush
 * (its `cork(); write; uncork()` goes from 2 back to the held 1).
 */
function uncorkUnlessHeld(this: HoldableSocket): void {
  if (this[kHeld] && this.writableCorked === 1) return;
  socketUncork.call(this);
}

/**
 * A server socket's destroy: a held answer is written first, as it would have been already
 * without the hold (an answer, then a parse error's 400 on the same socket, then the cut).
 */
function destroyAfterHeld(this: HoldableSocket, error?: Error): HoldableSocket {
  if (this[kHeld]) {
    this[kHeld] = false;
    socketUncork.call(this);
  }
  return socketDestroy.call(this, error) as HoldableSocket;
}

/** Sockets held in this turn, and an empty array to swap in (no allocation per turn). */
let held: HoldableSocket[] = [];
let spare: HoldableSocket[] = [];
let flushScheduled = false;

function writeHeld(): void {
  flushScheduled = false;
  const sockets = held;
  held = spare;
  spare = sockets;
  for (let i = 0; i < sockets.length; i++) {
    const socket = sockets[i] as HoldableSocket;
    // Released already if it was destroyed in the meantime.
    if (!socket[kHeld]) continue;
    socket[kHeld] = false;
    socketUncork.call(socket);
  }
  sockets.length = 0;
}

/**
 * A response whose bytes leave at the end of the event-loop turn in which it ended (setImmediate
 * runs once the poll phase has handled every socket that was ready), so that the answers of one
 * turn are written back to back. Why: on loopback every write wakes the client's thread. Written
 * one at a time, between the handling of the turn's other requests, each answer pays a full
 * wake-up of a client that has gone back to sleep; written together, the later ones find it
 * awake. Under load on 2 cores that was about a tenth of a cached read's CPU (docs/decisions.md,
 * "Answers of one turn written together"). The response itself ends as usual (`writableEnded`,
 * `finish` once the bytes are written); only the socket's flush waits, never past the turn, and
 * writes before `end()` (a streamed body) go out as they always did.
 */
export const CoalescedResponse = CoalescedServerResponse as unknown as typeof ServerResponse;

/*
 * Function-style on purpose: measured, an ES `class extends ServerResponse` (even an empty one)
 * made a score read cost about a third more server CPU, while a plain constructor that calls
 * ServerResponse costs nothing over ServerResponse itself (docs/decisions.md, "Answers of one
 * turn written together").
 */
function CoalescedServerResponse(this: ServerResponse, request: IncomingMessage, options?: object): void {
  (ServerResponse as unknown as (this: ServerResponse, request: IncomingMessage, options?: object) => void).call(
    this,
    request,
    options,
  );
}
Object.setPrototypeOf(CoalescedServerResponse.prototype, ServerResponse.prototype);
Object.setPrototypeOf(CoalescedServerResponse, ServerResponse);

const responseEnd = ServerResponse.prototype.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;

CoalescedServerResponse.prototype.end = function end(
  this: ServerResponse,
  chunk?: unknown,
  encoding?: unknown,
  callback?: unknown,
): ServerResponse {
  const socket = this.socket as HoldableSocket | null;
  if (socket === null || socket.destroyed || this.writableEnded) {
    responseEnd.call(this, chunk, encoding, callback);
    return this;
  }
  if (socket.uncork !== uncorkUnlessHeld) {
    socket[kHeld] = false;
    socket.uncork = uncorkUnlessHeld;
    socket.destroy = destroyAfterHeld;
  }
  const alreadyHeld = socket[kHeld];
  socket[kHeld] = true;
  try {
    // Node's end() writes into the corked socket, then uncorks it: that uncork is the one held.
    responseEnd.call(this, chunk, encoding, callback);
  } finally {
    // Also when end() threw (a `prefinish` listener, after the held uncork): never left corked.
    if (!alreadyHeld) hold(socket);
  }
  return this;
};

function hold(socket: HoldableSocket): void {
  if (socket.writableCorked === 0 || socket.destroyed) {
    socket[kHeld] = false;
    return;
  }
  held.push(socket);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(writeHeld);
  }
}
