"use client";
// Fleet stop from the console (docs/fleet-stop.md): a dry-run count first, then the reason; the whole
// team additionally needs the team's name typed back. On success the fleet-stop page shows progress.
// Mounted once per stop the operator starts (its state starts fresh each time).
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { fleetStopAction } from "@/app/(console)/stops/actions";
import type { StopFilterInput } from "@/lib/schemas/stops";
import { ReasonDialog } from "./reason-dialog";
import { reclaimAfter } from "./run-controls";

export interface FleetStopDialogProps {
  open: boolean;
  action: "pause" | "kill";
  filter: StopFilterInput;
  /** what the filter is, in words ("3 selected runs", "all 120 runs matching these filters", "every run of the team") */
  label: string;
  /** the team's name, when the filter is the whole team (typed confirmation) */
  confirmTeam?: string;
  /** the team's reclaim of paused runs, when configured: the pause dialog says it does not apply to a fleet pause */
  pauseReclaim?: { seconds: number; action: string } | null;
  onCancel: () => void;
}

export function FleetStopDialog({ open, action, filter, label, confirmTeam, pauseReclaim, onCancel }: FleetStopDialogProps) {
  const router = useRouter();
  const [count, setCount] = useState<string>("counting…");
  // How many of the covered runs are working now (docs/console.md#run-activity); null until the dry run answers.
  const [working, setWorking] = useState<number | null>(null);
  const [typed, setTyped] = useState("");
  const filterKey = JSON.stringify(filter);

  useEffect(() => {
    if (!open) return;
    let live = true;
    fleetStopAction({ action, filter: JSON.parse(filterKey) as StopFilterInput, reason: "dry run", dryRun: true })
      .then((r) => {
        if (!live) return;
        setCount(
          r.ok
            ? `${r.data.matched} run${r.data.matched === 1 ? "" : "s"}${action === "kill" ? ` in ${r.data.barrierTargets} tree${r.data.barrierTargets === 1 ? "" : "s"}` : ""}`
            : `unknown (${r.message})`,
        );
        setWorking(r.ok ? r.data.working : null);
      })
      .catch((e: unknown) => {
        if (live) setCount(`unknown (${e instanceof Error ? e.message : String(e)})`);
      });
    return () => {
      live = false;
    };
  }, [open, action, filterKey]);

  const title = confirmTeam
    ? action === "kill"
      ? "Stop everything: kill every run of the team"
      : "Pause every run of the team"
    : `${action === "kill" ? "Kill" : "Pause"} ${label}`;
  return (
    <ReasonDialog
      open={open}
      title={title}
      danger={action === "kill"}
      onCancel={onCancel}
      confirmLabel={action === "kill" ? "Kill them and start the barriers" : "Pause them"}
      onConfirm={async (reason) => {
        if (confirmTeam && typed.trim() !== confirmTeam) return `type the team's name ("${confirmTeam}") to confirm`;
        const r = await fleetStopAction({ action, filter, reason, ...(confirmTeam ? { confirmTeam: typed.trim() } : {}) });
        if (!r.ok) return r.message;
        if (r.data.stopId) router.push(`/stops/${r.data.stopId}`);
        onCancel();
        return null;
      }}
    >
      <p data-testid="fleet-dry-run">
        This covers <strong>{count}</strong>
        {working === null ? " now" : `, ${working} working now`}
        {filter.runIds
          ? // A list of ids covers those runs and what they delegate, never a run created later elsewhere.
            action === "pause"
            ? ", and the runs they start later, until the pause is lifted. It names these runs one by one: no other run created later is covered"
            : ", and refuses the runs they start later, for good. It names these runs one by one: no other run created later is covered"
          : action === "pause"
            ? ", and every matching run created later until the pause is lifted"
            : ", and refuses every matching run created later, for good"}
        .
      </p>
      {action === "kill" ? (
        <p>
          <strong>Kill is final.</strong> One scope stops dispatch for all of them the moment it commits; then one barrier per tree revokes,
          cancels queued work and settles in-flight calls, and a fleet receipt is issued when every barrier has its receipt.
        </p>
      ) : (
        <p>
          Their next gate calls hold; calls already running continue.{" "}
          <strong data-testid="fleet-pause-lasts">
            A fleet pause lasts until someone lifts it on its page under Stops
            {pauseReclaim
              ? `: the team's reclaim (a run paused on its own for ${reclaimAfter(pauseReclaim.seconds)} is ${pauseReclaim.action === "kill" ? "killed" : "reclaimed"}) never turns it into a kill`
              : ""}
            .
          </strong>
        </p>
      )}
      {confirmTeam ? (
        <label className="field">
          <span>
            Type the team&rsquo;s name, <strong>{confirmTeam}</strong>, to confirm
          </span>
          <input name="confirmTeam" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
        </label>
      ) : null}
    </ReasonDialog>
  );
}
