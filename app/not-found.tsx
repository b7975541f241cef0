import Link from "next/link";

export default function NotFound() {
  return (
    <div className="narrow-box">
      <div className="empty" role="status">
        <p className="empty-title">404 — not found</p>
        <p>There is nothing here, or it belongs to a team you are not a member of.</p>
        <p>
          <Link href="/runs">Back to runs</Link>
        </p>
      </div>
    </div>
  );
}
