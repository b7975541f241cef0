"use client";
// A confirmation that cannot be clicked through: every control action needs a written reason (it goes
// to the audit trail and the receipt). Native <dialog>: focus moves in, Esc closes, focus returns.
// A failed action (a refusal, a 500, or no answer at all) shows its error, keeps the reason and offers
// a retry; the dialog never suggests that the action happened.
import { useCallback, useId, useState, type FormEvent, type ReactNode } from "react";
import { useModal } from "./use-modal";
import { FormError } from "./states";

export interface ReasonDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onCancel: () => void;
  /** Returns an error message to show, or null on success. */
  onConfirm: (reason: string) => Promise<string | null>;
}

export function ReasonDialog({ open, title, children, confirmLabel, danger, onCancel, onConfirm }: ReasonDialogProps) {
  const titleId = useId();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState(false);
  const reset = useCallback(() => {
    setReason("");
    setError(null);
    setBusy(false);
    setFailed(false);
  }, []);
  const ref = useModal(open, reset);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!reason.trim()) {
      setError("A reason is required.");
      return;
    }
    setBusy(true);
    setError(null);
    let err: string | null;
    try {
      err = await onConfirm(reason.trim());
    } catch (e) {
      // A network error or a server action that failed outright: nothing is known to have happened.
      err = `no answer from the control plane (${e instanceof Error ? e.message : String(e)})`;
    }
    setBusy(false);
    if (err) {
      setError(`Not done: ${err}. Your reason is kept; you can try again.`);
      setFailed(true);
    }
  }

  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onCancel} onCancel={onCancel}>
      <form onSubmit={submit} className="stack">
        <h2 id={titleId}>{title}</h2>
        {children ? <div className="dialog-body">{children}</div> : null}
        <label className="field">
          <span>Reason (required, recorded in the audit trail)</span>
          <textarea
            name="reason"
            rows={3}
            required
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            autoFocus
            aria-invalid={error ? true : undefined}
          />
        </label>
        <FormError message={error} />
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className={`btn ${danger ? "btn-danger" : "btn-primary"}`} disabled={busy || !reason.trim()}>
            {busy ? "Working…" : failed ? `Retry: ${confirmLabel}` : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
