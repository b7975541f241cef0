"use client";
import { signIn, signOut } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { FormError } from "./states";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "That email and password do not match an account.",
  NoTeam: "You are signed in, but you are not a member of any team. Ask a team admin to add you.",
  AccessDenied: "Your single sign-on account does not match a Quiesce user. Ask a team admin to add your email.",
  SessionRequired: "Please sign in to continue.",
  Throttled: "Too many failed sign-ins. Wait a little and try again.",
};

export function SignInForm({
  oidcName,
  initialError,
  callbackUrl,
  demoHint,
}: {
  oidcName: string | null;
  initialError: string | null;
  callbackUrl: string;
  demoHint: boolean;
}) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(initialError ? (MESSAGES[initialError] ?? "Sign-in failed. Try again.") : null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const res = await signIn("credentials", {
      email: String(data.get("email") ?? ""),
      password: String(data.get("password") ?? ""),
      redirect: false,
    });
    if (!res || res.error) {
      setBusy(false);
      setError(MESSAGES[res?.error ?? ""] ?? MESSAGES.CredentialsSignin!);
      return;
    }
    router.replace(callbackUrl);
    router.refresh();
  }

  return (
    <div className="signin-card">
      <h1>
        <span className="brand-mark" aria-hidden>
          ◼
        </span>{" "}
        Quiesce
      </h1>
      <p className="muted">Sign in to the operator console.</p>
      <FormError message={error} />
      {initialError === "NoTeam" ? (
        <button
          type="button"
          className="btn"
          onClick={async () => {
            await signOut({ redirect: false });
            router.refresh();
          }}
        >
          Sign out
        </button>
      ) : (
        <>
          <form onSubmit={submit} className="stack">
            <label className="field">
              <span>Email</span>
              <input name="email" type="email" autoComplete="username" required autoFocus />
            </label>
            <label className="field">
              <span>Password</span>
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
            <button type="submit" className="btn btn-primary" disabled={busy}>
              {busy ? "Signing in…" : "Sign in"}
            </button>
          </form>
          {oidcName ? (
            <>
              <div className="divider">
                <span>or</span>
              </div>
              <button type="button" className="btn" onClick={() => signIn("oidc", { callbackUrl })}>
                Continue with {oidcName}
              </button>
            </>
          ) : null}
          {demoHint ? (
            <p className="hint">
              Demo accounts (admin@, operator@, manager@, viewer@demo.quiesce.dev) were printed by the first <code>npm start</code>, with
              their password; also in <code>.quiesce/demo-keys.json</code>.
            </p>
          ) : null}
        </>
      )}
    </div>
  );
}
