// Waking hold loops early: the adapters ring a Doorbell on every control event, and the SDK's one hold
// loop (lib/sdk/hold.ts askGate) reads its signal before each ask, so a change ends the wait at once.

/** A one-shot "something changed" signal that can be re-armed; used to wake hold loops on SSE events. */
export class Doorbell {
  private ctrl = new AbortController();
  get signal(): AbortSignal {
    return this.ctrl.signal;
  }
  ring(): void {
    const old = this.ctrl;
    this.ctrl = new AbortController();
    old.abort();
  }
}
