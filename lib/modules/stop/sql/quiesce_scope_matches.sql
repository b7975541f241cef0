CREATE OR REPLACE FUNCTION quiesce_scope_matches(s stop_scopes, r runs) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT (s.f_harness IS NULL OR r.harness = ANY (s.f_harness))
       AND (s.f_agent IS NULL OR r.native_agent_id = ANY (s.f_agent) OR r.created_by = ANY (s.f_agent))
       AND (s.f_task_prefix IS NULL OR starts_with(r.task_id, s.f_task_prefix))
       AND (s.f_created_after IS NULL OR r.created_at >= s.f_created_after)
       AND (s.f_created_before IS NULL OR r.created_at < s.f_created_before)
       AND (s.f_status IS NULL OR (CASE WHEN r.lifecycle = 'killed' THEN 'killed'
                                        WHEN r.finished_at IS NOT NULL THEN 'finished'
                                        WHEN r.lifecycle = 'paused' THEN 'paused' ELSE 'active' END) = ANY (s.f_status))
       AND (s.f_run_ids IS NULL OR r.id = ANY (s.f_run_ids))
$$;
