"use client";
// A <dialog> that opens as a modal when `open` turns true (after `onOpen` resets its fields) and closes
// when it turns false: the one open/close rule of every dialog in the console. Closing (Esc, Cancel or
// done) returns focus to the control that opened it, or to the page's heading when that control is
// gone (a Kill button replaced by the run's new state) — never to <body>.
import { useEffect, useRef } from "react";
import { focusMainHeading } from "./route-focus";

export function useModal(open: boolean, onOpen: () => void) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      onOpen();
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      d.showModal();
    }
    if (!open && d.open) d.close();
  }, [open, onOpen]);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    // On the close event, and on unmount: most dialogs are mounted per opening, so Esc unmounts them
    // before the close event could run.
    const restore = () => {
      const o = opener.current;
      if (!o) return;
      opener.current = null;
      // After React has re-rendered for the close: the opener may have been replaced or disabled.
      requestAnimationFrame(() => {
        const active = document.activeElement;
        if (active && active !== document.body && active.isConnected && !d.contains(active)) return;
        if (o.isConnected && !(o as HTMLButtonElement).disabled) o.focus();
        else focusMainHeading();
      });
    };
    d.addEventListener("close", restore);
    return () => {
      d.removeEventListener("close", restore);
      // Disconnected means unmounted (not React's development re-run of effects, which keeps the node).
      if (!d.isConnected) restore();
    };
  }, []);
  return ref;
}
