// An inline explanation: the word links to its glossary entry and carries the one-line definition as
// its title (hover; a screen reader's description) and as a popover shown while the keyboard focuses it
// (app/globals.css, .term:focus-visible::after). A link, so the keyboard reaches it.
import Link from "next/link";
import type { ReactNode } from "react";
import { GLOSSARY_BY_ID } from "./glossary";

export function Term({ id, children }: { id: string; children: ReactNode }) {
  const entry = GLOSSARY_BY_ID.get(id);
  if (!entry) throw new Error(`no glossary entry ${id}`);
  return (
    <Link href={`/glossary#${id}`} className="term" title={entry.short} data-tip={entry.short}>
      {children}
    </Link>
  );
}
