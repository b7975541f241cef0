-- Signed receipts and outbound stop events.

-- Every receipt version is signed when it is issued: the DSSE envelope (an in-toto Statement whose
-- predicate is the receipt body) is kept with the row, with the id of the key that signed it.
ALTER TABLE "stop_receipts" ADD COLUMN "envelope" JSONB;
ALTER TABLE "stop_receipts" ADD COLUMN "key_id" TEXT;

-- A team's webhook endpoints: where CloudEvents go, which event types, and the HMAC secret.
CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "event_types" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_endpoints_team_id_idx" ON "webhook_endpoints"("team_id");
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The outbox: one row per (event, endpoint), written in the same transaction as the control write
-- that caused the event. Delivered in id order per (endpoint, ordering key = the run), at least once.
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "ordering_key" TEXT NOT NULL,
    "event" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");
CREATE INDEX "webhook_deliveries_endpoint_id_ordering_key_id_idx" ON "webhook_deliveries"("endpoint_id", "ordering_key", "id");
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- An unknown outcome's owner is named by a trigger (quiesce_open_uncertainty) in the transaction that
-- made the outcome unknown; its reconciliation.assigned event is written here, in that same transaction,
-- in the same CloudEvent shape as lib/integrations/events.ts. Assignments by a person go through the dal.
CREATE OR REPLACE FUNCTION quiesce_emit_reconciliation_assigned() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_event_id text := gen_random_uuid()::text;
    v_op record;
    v_barrier text;
BEGIN
    SELECT o.run_id, o.operation_id INTO v_op FROM operations o WHERE o.id = NEW.operation_id;
    SELECT s.barrier_id INTO v_barrier FROM settlements s WHERE s.id = NEW.settlement_id;
    INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event)
    SELECT v_event_id, w.id, w.team_id, 'reconciliation.assigned', v_op.run_id,
           jsonb_build_object(
             'specversion', '1.0', 'id', v_event_id, 'source', '/quiesce/teams/' || NEW.team_id,
             'type', 'dev.quiesce.reconciliation.assigned', 'subject', NEW.id,
             'time', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'datacontenttype', 'application/json',
             'data', jsonb_build_object('run_id', v_op.run_id, 'reconciliation_id', NEW.id, 'operation_id', v_op.operation_id,
                                        'assignee_user_id', NEW.assignee_user_id, 'by', NEW.assigned_by, 'barrier_id', v_barrier))
      FROM webhook_endpoints w
     WHERE w.team_id = NEW.team_id AND w.enabled
       AND ('reconciliation.assigned' = ANY (w.event_types) OR '*' = ANY (w.event_types))
     ORDER BY w.id;
    RETURN NULL;
END;
$fn$;

CREATE TRIGGER reconciliations_emit_assigned
    AFTER INSERT ON reconciliations
    FOR EACH ROW WHEN (NEW.assignee_user_id IS NOT NULL)
    EXECUTE FUNCTION quiesce_emit_reconciliation_assigned();
