// Calls that passed the gate and are running upstream. When authority changes (an SSE wake-up, or
// the slow safety-net tick if the stream is down) each one's heartbeat is asked; `continue: false`
// aborts it, which makes the MCP SDK send notifications/cancelled for that request to the upstream.
// A control plane that cannot be reached does NOT abort running calls (it denies new ones): a blip
// must not turn every running call into an unknown outcome.
import type { QuiesceClient } from "../../sdk/client";
import { describeError } from "../common/control";

export interface InflightCall {
  operationId: string;
  tool: string;
  ctrl: AbortController;
  /** Set once the upstream answered: from then on a kill can no longer make its outcome unknown. */
  answered: boolean;
  abortReason?: string;
}

export class Inflight {
  private readonly calls = new Map<string, InflightCall>();
  private checking: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly client: QuiesceClient,
    private readonly log: (m: string) => void,
  ) {}

  add(operationId: string, tool: string): InflightCall {
    const call: InflightCall = { operationId, tool, ctrl: new AbortController(), answered: false };
    this.calls.set(operationId, call);
    return call;
  }

  remove(operationId: string): void {
    this.calls.delete(operationId);
  }

  get size(): number {
    return this.calls.size;
  }

  /** Re-checks every running call; concurrent requests coalesce into one more pass. */
  check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.again = false;
        await Promise.all([...this.calls.values()].map((c) => this.checkOne(c)));
      } while (this.again);
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkOne(call: InflightCall): Promise<void> {
    if (call.answered || call.ctrl.signal.aborted) return;
    try {
      const hb = await this.client.heartbeat(call.operationId);
      if (!hb.continue && !call.answered) {
        call.abortReason = hb.reason;
        this.log(`aborting ${call.tool} (${call.operationId}): ${hb.reason}`);
        call.ctrl.abort(new Error(`quiesce: ${hb.reason}`));
      }
    } catch (err) {
      this.log(`heartbeat for ${call.operationId} failed: ${describeError(err)}`);
    }
  }
}
