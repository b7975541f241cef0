"use client";
// A plain confirmation dialog (for actions whose record needs no reason, such as revoking a key).
import { useCallback, useId, useState } from "react";
import { useModal } from "./use-modal";
import { useRouter } from "next/navigation";
import { FormError } from "./states";

export function ReasonlessConfirm({
  open,
  title,
  body,
  confirmLabel,
  onCancel,
  onConfirm,
}: {
  open: boolean;
  title: string;
  body: string;
  confirmLabel: string;
  onCancel: () => void;
  onConfirm: () => Promise<string | null>;
}) {
  const titleId = useId();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reset = useCallback(() => {
    setError(null);
  }, []);
  const ref = useModal(open, reset);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onCancel} onCancel={onCancel}>
      <div className="stack">
        <h2 id={titleId}>{title}</h2>
        <p>{body}</p>
        <FormError message={error} />
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onCancel} disabled={busy} autoFocus>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-danger"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              const e = await onConfirm();
              setBusy(false);
              setError(e);
            }}
          >
            {busy ? "Working…" : confirmLabel}
          </button>
        </div>
      </div>
    </dialog>
  );
}

/** Confirm an action on one item (`target`, null when closed); on success it closes and refreshes the page. */
export function ConfirmOnItem<T>({
  target,
  title,
  body,
  confirmLabel,
  onClose,
  act,
}: {
  target: T | null;
  title: (t: T) => string;
  body: string;
  confirmLabel: string;
  onClose: () => void;
  act: (t: T) => Promise<{ ok: true } | { ok: false; message: string }>;
}) {
  const router = useRouter();
  return (
    <ReasonlessConfirm
      open={target !== null}
      title={target ? title(target) : ""}
      body={body}
      confirmLabel={confirmLabel}
      onCancel={onClose}
      onConfirm={async () => {
        if (!target) return null;
        const r = await act(target);
        if (!r.ok) return r.message;
        onClose();
        router.refresh();
        return null;
      }}
    />
  );
}
