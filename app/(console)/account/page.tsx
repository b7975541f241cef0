// The signed-in member's own account: who they are, and changing their password.
import { requireSession } from "@/lib/modules/sessions";
import { PasswordForm } from "@/components/password-form";

export const metadata = { title: "Your account" };

export default async function AccountPage() {
  const s = await requireSession();
  return (
    <section aria-labelledby="account-page-title">
      <div className="page-head">
        <h1 id="account-page-title">Your account</h1>
        <p className="muted">
          Signed in as <strong>{s.user.email}</strong> ({s.user.name}).
        </p>
      </div>
      <PasswordForm />
    </section>
  );
}
