// The public keys document served at /.well-known/quiesce/keys.json and printed by `quiesce keys public --json`.
import { publicKeys, type PublicKeyInfo } from "./keystore";
import { STOP_RECEIPT_PREDICATE, DSSE_PAYLOAD_TYPE } from "../../control/evidence/signing";

export { publicKeys };

export interface KeysDocument {
  issuer: "quiesce";
  payload_type: string;
  predicate_types: string[];
  keys: PublicKeyInfo[];
}

export function keysDocument(): KeysDocument {
  return { issuer: "quiesce", payload_type: DSSE_PAYLOAD_TYPE, predicate_types: [STOP_RECEIPT_PREDICATE], keys: publicKeys() };
}
