import { redirect } from "next/navigation";

// The console starts at the runs list; signed-out visitors are sent on to sign-in from there.
export default function Home() {
  redirect("/runs");
}
