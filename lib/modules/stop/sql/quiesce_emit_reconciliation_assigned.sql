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
