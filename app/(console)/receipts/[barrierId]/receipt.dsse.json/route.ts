import { receiptDownload } from "@/lib/actions/receipt-download";

export const dynamic = "force-dynamic";
export const GET = receiptDownload("dsse");
