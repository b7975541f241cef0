import type { Metadata } from "next";
import type { ReactNode } from "react";
import { headers } from "next/headers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Quiesce", template: "%s · Quiesce" },
  description: 'Make "stop the agent" true: revoke, cancel, settle, prove.',
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Reading the request makes every page render per request, which the CSP nonce (proxy.ts) needs:
  // a prerendered page would carry no nonce and its scripts would be blocked.
  await headers();
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
