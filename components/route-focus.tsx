"use client";
// After a client-side navigation focus moves to the new page's main heading, so a keyboard or screen
// reader user starts at what the page is (WCAG 2.4.3) instead of wherever the old page left focus.
// The first load is left alone: the browser starts at the top, where the skip link is.
import { usePathname } from "next/navigation";
import { useEffect, useRef } from "react";

/** Focus the main heading (made focusable by script, tabIndex -1); true if there was one. */
export function focusMainHeading(): boolean {
  const h = document.querySelector<HTMLElement>("main h1");
  if (!h) return false;
  if (!h.hasAttribute("tabindex")) h.tabIndex = -1;
  h.focus({ preventScroll: false });
  return true;
}

export function RouteFocus() {
  const pathname = usePathname();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    // The new page may still be streaming in: try for a short while, then give up quietly.
    let tries = 0;
    let frame = 0;
    const attempt = () => {
      if (focusMainHeading() || ++tries > 60) return;
      frame = requestAnimationFrame(attempt);
    };
    attempt();
    return () => cancelAnimationFrame(frame);
  }, [pathname]);
  return null;
}
