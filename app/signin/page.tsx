import { redirect } from "next/navigation";
import { sessionState } from "@/lib/modules/sessions";
import { oidcConfigured } from "@/lib/platform/auth/oidc";
import { SignInForm } from "@/components/sign-in-form";
import { safeCallbackUrl } from "@/lib/platform/security/callback-url";
import { setting } from "@/lib/platform/config";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · Quiesce" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const state = await sessionState();
  // Only same-origin paths are followed after sign-in (no open redirect).
  const callbackUrl = safeCallbackUrl(sp.callbackUrl);
  if (state.kind === "ok") redirect(callbackUrl);
  const error = state.kind === "no_team" ? "NoTeam" : typeof sp.error === "string" ? sp.error : null;
  return (
    <main className="signin">
      <SignInForm
        oidcName={oidcConfigured() ? setting("QUIESCE_OIDC_NAME") : null}
        initialError={error}
        callbackUrl={callbackUrl}
        demoHint={setting("QUIESCE_DEMO")}
      />
    </main>
  );
}
