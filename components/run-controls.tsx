"use client";
// Pause / resume / kill and breaker trip / reset. Only the controls the member's role allows are
// rendered (the server refuses the rest anyway). Lifecycle and breaker are separate rows of controls.
import { useRouter } from "next/navigation";
import { useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { breakerAction, killRunAction, pauseRunAction, restartRunAction, resumeRunAction } from "@/app/(console)/runs/[runId]/actions";
import { ReasonDialog } from "./reason-dialog";

export interface Can {
  pause: boolean;
  resume: boolean;
  kill: boolean;
  trip: boolean;
  reset: boolean;
}
type Pending = null | "pause" | "resume" | "kill" | "trip" | "reset" | "restart";

interface Control {
  show: boolean;
  button: string;
  title: string;
  confirm: string;
  danger?: boolean;
  body: ReactNode;
  run: (reason: string) => Promise<{ ok: true } | { ok: false; message: string }>;
}

export function RunControls({
  runId,
  lifecycle,
  breaker,
  can,
  descendants,
  pausePolicy = null,
  root = false,
}: {
  runId: string;
  lifecycle: string;
  breaker: string;
  can: Can;
  descendants: number;
  /** the team's reclaim of paused runs, when configured: the pause dialog says when it turns into a kill */
  pausePolicy?: { seconds: number; action: string } | null;
  /** a root run: a killed root may restart on settled ground (docs/evidence.md#restart) */
  root?: boolean;
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
  const showRestart = can.resume && lifecycle === "killed" && root;
  if (!showPause && !showResume && !showKill && !showTrip && !showReset && !showRestart) return null;

  const them = descendants ? ` and its ${descendants} descendant${descendants === 1 ? "" : "s"}` : "";
  // The five controls differ in their words and their action only: one table, one dialog (mounted per
  // opening, so each starts with an empty reason).
  const controls: Record<Exclude<Pending, null>, Control> = {
    pause: {
      show: showPause,
      button: "Pause",
      title: "Pause this run",
      confirm: "Pause run",
      body: (
        <p>
          The next gate call of this run{them} will <strong>hold</strong>. Calls already running continue; nothing is cancelled. Resume
          re-checks against current policy.
          {pausePolicy ? (
            <>
              {" "}
              <strong data-testid="pause-reclaim">
                If it is still paused after {reclaimAfter(pausePolicy.seconds)}, the team&rsquo;s reclaim{" "}
                {pausePolicy.action === "kill" ? "kills it" : `reclaims it (${pausePolicy.action.replaceAll("_", " ")})`}.
              </strong>
            </>
          ) : null}
        </p>
      ),
      run: (reason) => pauseRunAction({ runId, reason }),
    },
    resume: {
      show: showResume,
      button: "Resume",
      title: "Resume this run",
      confirm: "Resume run",
      body: <p>Held calls get a fresh gate decision against current policy.</p>,
      run: (reason) => resumeRunAction({ runId, reason }),
    },
    trip: {
      show: showTrip,
      button: "Trip breaker",
      title: "Trip the breaker",
      confirm: "Trip breaker",
      body: (
        <>
          <p>
            The breaker opens: every gate call is denied until it is reset or a half-open probe succeeds. The lifecycle does not change.
          </p>
          <p data-testid="half-open">
            Half open: after the cool-down the gate admits exactly one call as a probe; if it succeeds the breaker closes, if it fails it
            opens again.
          </p>
        </>
      ),
      run: (reason) => breakerAction({ runId, action: "trip", reason }),
    },
    reset: {
      show: showReset,
      button: "Reset breaker",
      title: "Reset the breaker",
      confirm: "Reset breaker",
      body: <p>The breaker closes and calls are admitted again (unless the run is paused or killed).</p>,
      run: (reason) => breakerAction({ runId, action: "reset", reason }),
    },
    kill: {
      show: showKill,
      button: "Kill…",
      title: "Kill this run",
      confirm: "Kill run and start the barrier",
      danger: true,
      body: (
        <>
          <p>
            <strong>Kill is final.</strong> In one transaction the run{them} are killed, every lease is revoked and the epoch raised, and
            queued, scheduled and retry work is cancelled (and kept). Then the barrier settles each in-flight call with its provider and
            issues a stop receipt.
          </p>
          <p data-testid="kill-owner">
            <strong>Who owns the unknowns:</strong> any call whose outcome the provider cannot prove is listed as unknown and assigned to
            the team&rsquo;s default reconciler if the team names one, otherwise to you, until it is recorded or handed to someone else.
          </p>
        </>
      ),
      run: async (reason) => {
        const r = await killRunAction({ runId, reason });
        // After a kill the console follows the barrier to its receipt.
        if (r.ok) router.push(`/barriers/${r.data.barrierId}?follow=1`);
        return r;
      },
    },
    restart: {
      show: showRestart,
      button: "Restart…",
      title: "Restart this task",
      confirm: "Restart as a new run",
      body: (
        <p>
          A new root run starts for the same task, held by the same agent. It is allowed only on settled ground: the stop receipt says
          stopped and quiet and no recovery is still owed. The new run inherits the old tree&rsquo;s operation ledger — what already
          happened answers <code>already_applied</code>, what never ran may run again.
        </p>
      ),
      run: async (reason) => {
        const r = await restartRunAction({ runId, reason });
        if (r.ok) router.push(`/runs/${r.data.runId}`);
        return r;
      },
    },
  };
  const order = ["pause", "resume", "trip", "reset", "kill", "restart"] as const;
  const open = pending ? controls[pending] : null;

  return (
    <div className="controls" role="group" aria-label="Run controls">
      {order
        .filter((k) => controls[k].show)
        .map((k) => (
          <button key={k} type="button" className={controls[k].danger ? "btn btn-danger" : "btn"} onClick={() => setPending(k)}>
            {controls[k].button}
          </button>
        ))}
      {open ? (
        <ReasonDialog
          key={pending}
          open
          title={open.title}
          confirmLabel={open.confirm}
          danger={open.danger}
          onCancel={close}
          onConfirm={async (reason) => {
            const r = await open.run(reason);
            if (!r.ok) return r.message;
            await client.invalidateQueries();
            close();
            return null;
          }}
        >
          {open.body}
        </ReasonDialog>
      ) : null}
    </div>
  );
}

/** "14 minutes", "2 hours", "90 seconds": the reclaim delay in words. */
export function reclaimAfter(seconds: number): string {
  const unit = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  if (seconds % 3600 === 0) return unit(seconds / 3600, "hour");
  if (seconds >= 120 && seconds % 60 === 0) return unit(seconds / 60, "minute");
  return unit(seconds, "second");
}
