"use client";
// Changing one's own password: the current one, then the new one twice. On success every other session
// of the user has ended; this browser stays signed in (the action re-issues its session).
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { changePasswordAction } from "@/app/(console)/account/actions";
import { FormError } from "./states";

export function PasswordForm() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    setError(null);
    setDone(false);
    if (f.get("newPassword") !== f.get("confirmPassword")) {
      setError("confirmPassword: the two new passwords differ");
      return;
    }
    setBusy(true);
    const r = await changePasswordAction({
      currentPassword: String(f.get("currentPassword") ?? ""),
      newPassword: String(f.get("newPassword") ?? ""),
    });
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    form.reset();
    setDone(true);
    router.refresh();
  }

  return (
    <section className="card" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <form onSubmit={submit} className="form-grid">
        <label className="field">
          <span>Current password</span>
          <input name="currentPassword" type="password" autoComplete="current-password" required />
        </label>
        <label className="field">
          <span>New password</span>
          <input name="newPassword" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <label className="field">
          <span>New password again</span>
          <input name="confirmPassword" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? "Changing…" : "Change password"}
        </button>
      </form>
      <p className="small muted">At least 8 characters, at most 72 bytes. Every other session of yours is signed out.</p>
      <FormError message={error} />
      {done ? (
        <div className="notice notice-ok" role="status">
          Password changed. Your other sessions have been signed out.
        </div>
      ) : null}
    </section>
  );
}
