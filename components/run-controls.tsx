"use client";
// Pause / resume / kill and breaker trip / reset. Only the controls the member's role allows are
// rendered (the server refuses the rest anyway). Lifecycle and breaker are separate rows of controls.
import { useRouter } from "next/navigation";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { breakerAction, killRunAction, pauseRunAction, resumeRunAction } from "@/app/(console)/runs/[runId]/actions";
import { ReasonDialog } from "./reason-dialog";

export interface Can {
  pause: boolean;
  resume: boolean;
  kill: boolean;
  trip: boolean;
  reset: boolean;
}
type Pending = null | "pause" | "resume" | "kill" | "trip" | "reset";

export function RunControls({
  runId,
  lifecycle,
  breaker,
  can,
  descendants,
}: {
  runId: string;
  lifecycle: string;
  breaker: string;
  can: Can;
  descendants: number;
}) {
  const router = useRouter();
  const client = useQueryClient();
  const [pending, setPending] = useState<Pending>(null);
  const close = () => setPending(null);

  const showPause = can.pause && lifecycle === "normal";
  const showResume = can.resume && lifecycle === "paused";
  const showKill = can.kill && lifecycle !== "killed";
  const showTrip = can.trip && lifecycle !== "killed" && breaker !== "open";
  const showReset = can.reset && lifecycle !== "killed" && breaker !== "closed";
  if (!showPause && !showResume && !showKill && !showTrip && !showReset) return null;

  async function done(message: string | null) {
    if (message) return message;
    await client.invalidateQueries();
    close();
    return null;
  }

  return (
    <div className="controls" role="group" aria-label="Run controls">
      {showPause ? (
        <button type="button" className="btn" onClick={() => setPending("pause")}>
          Pause
        </button>
      ) : null}
      {showResume ? (
        <button type="button" className="btn" onClick={() => setPending("resume")}>
          Resume
        </button>
      ) : null}
      {showTrip ? (
        <button type="button" className="btn" onClick={() => setPending("trip")}>
          Trip breaker
        </button>
      ) : null}
      {showReset ? (
        <button type="button" className="btn" onClick={() => setPending("reset")}>
          Reset breaker
        </button>
      ) : null}
      {showKill ? (
        <button type="button" className="btn btn-danger" onClick={() => setPending("kill")}>
          Kill…
        </button>
      ) : null}

      <ReasonDialog
        open={pending === "pause"}
        title="Pause this run"
        confirmLabel="Pause run"
        onCancel={close}
        onConfirm={async (reason) => {
          const r = await pauseRunAction({ runId, reason });
          return done(r.ok ? null : r.message);
        }}
      >
        <p>
          The next gate call of this run{descendants ? ` and its ${descendants} descendant${descendants === 1 ? "" : "s"}` : ""} will{" "}
          <strong>hold</strong>. Calls already running continue; nothing is cancelled. Resume re-checks against current policy.
        </p>
      </ReasonDialog>
      <ReasonDialog
        open={pending === "resume"}
        title="Resume this run"
        confirmLabel="Resume run"
        onCancel={close}
        onConfirm={async (reason) => {
          const r = await resumeRunAction({ runId, reason });
          return done(r.ok ? null : r.message);
        }}
      >
        <p>Held calls get a fresh gate decision against current policy.</p>
      </ReasonDialog>
      <ReasonDialog
        open={pending === "trip"}
        title="Trip the breaker"
        confirmLabel="Trip breaker"
        onCancel={close}
        onConfirm={async (reason) => {
          const r = await breakerAction({ runId, action: "trip", reason });
          return done(r.ok ? null : r.message);
        }}
      >
        <p>
          The breaker opens: every gate call is denied (<code>breaker_open</code>) until it is reset or a half-open probe succeeds. The
          lifecycle does not change.
        </p>
      </ReasonDialog>
      <ReasonDialog
        open={pending === "reset"}
        title="Reset the breaker"
        confirmLabel="Reset breaker"
        onCancel={close}
        onConfirm={async (reason) => {
          const r = await breakerAction({ runId, action: "reset", reason });
          return done(r.ok ? null : r.message);
        }}
      >
        <p>The breaker closes and calls are admitted again (unless the run is paused or killed).</p>
      </ReasonDialog>
      <ReasonDialog
        open={pending === "kill"}
        title="Kill this run"
        confirmLabel="Kill run and start the barrier"
        danger
        onCancel={close}
        onConfirm={async (reason) => {
          const r = await killRunAction({ runId, reason });
          if (!r.ok) return r.message;
          close();
          router.push(`/barriers/${r.data.barrierId}?follow=1`);
          return null;
        }}
      >
        <p>
          <strong>Kill is final.</strong> In one transaction the run
          {descendants ? ` and its ${descendants} descendant${descendants === 1 ? "" : "s"}` : ""} are killed, every lease is revoked and
          the epoch raised, and queued, scheduled and retry work is cancelled (and kept). Then the barrier settles each in-flight call with
          its provider and issues a stop receipt.
        </p>
      </ReasonDialog>
    </div>
  );
}
