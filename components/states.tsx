// Empty, loading and error states, so every view says what is happening instead of showing nothing.
import type { ReactNode } from "react";

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <p className="empty-title">{title}</p>
      {children ? <div className="empty-body">{children}</div> : null}
    </div>
  );
}

export function LoadingBlock({ label = "Loading…", rows = 4 }: { label?: string; rows?: number }) {
  return (
    <div className="loading" role="status" aria-live="polite" aria-busy="true">
      <span className="sr-only">{label}</span>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="skeleton" style={{ width: `${90 - i * 12}%` }} />
      ))}
    </div>
  );
}

export function ErrorNotice({
  title = "Could not load this view",
  message,
  retry,
}: {
  title?: string;
  message: string;
  retry?: () => void;
}) {
  return (
    <div className="notice notice-error" role="alert">
      <strong>{title}</strong>
      <span>{message}</span>
      {retry ? (
        <button type="button" className="btn btn-small" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Shown above live data when a refresh fails: the data below is the last good copy. */
export function StaleNotice({ error }: { error: Error | null }) {
  if (!error) return null;
  return (
    <div className="notice notice-warn" role="status">
      Live refresh failing ({error.message}); showing the last data received.
    </div>
  );
}

/** A form's or dialog's error, announced as it appears; nothing when there is none. */
export function FormError({ message }: { message: string | null }) {
  return message ? (
    <div className="notice notice-error" role="alert">
      {message}
    </div>
  ) : null;
}

export type ToastMessage = { ok: boolean; text: string };

/**
 * What an action just did, in the corner until dismissed or replaced. The live region is always rendered,
 * so a screen reader announces each new message (a region added with its text is often not read).
 */
export function Toast({ message, onDismiss }: { message: ToastMessage | null; onDismiss: () => void }) {
  return (
    <div role="status" aria-live="polite" className="toast-region">
      {message ? (
        <div className={`notice toast ${message.ok ? "notice-ok" : "notice-error"}`} data-testid="toast">
          <span>{message.text}</span>
          <button type="button" className="btn btn-small btn-ghost" onClick={onDismiss}>
            Dismiss
          </button>
        </div>
      ) : null}
    </div>
  );
}
