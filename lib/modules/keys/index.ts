import "server-only";

export { authenticateKey, createApiKey, listApiKeys, revokeApiKey, verifyKeyHash, type ApiKeyView, type VerifiedKey } from "./api-keys";
