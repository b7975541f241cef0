// The one horizontal scroller for wide tables. Keyboard users reach it (tabIndex 0) and scroll it with
// the arrow keys; screen readers hear it as a named region. On paper it does not scroll: the print
// styles let the table wrap to the page (app/globals.css, @media print).
import type { ReactNode } from "react";

export function TableScroll({ label, children, className }: { label: string; children: ReactNode; className?: string }) {
  return (
    // A focusable scroll region is the WCAG-recommended pattern (axe: scrollable-region-focusable).
    <div className={`table-wrap${className ? ` ${className}` : ""}`} tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
