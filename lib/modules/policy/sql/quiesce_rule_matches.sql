CREATE OR REPLACE FUNCTION quiesce_rule_matches(pr quiesce_rule, p_tool text, p_harness text, p_agent text, p_creator text,
                                                p_path text[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    -- Whether a policy rule applies to a call (lib/control/policy.ts ruleMatches): its tool glob, harness, agent
    -- (the run's own or its creator) and subtree (a run on the call's path). Inlined where it is called.
    SELECT (pr.tool_regex IS NULL OR p_tool ~ pr.tool_regex)
       AND (pr.harness IS NULL OR pr.harness::text = p_harness)
       AND (pr.agent IS NULL OR pr.agent = p_agent OR pr.agent = p_creator)
       AND (pr.subtree_run_id IS NULL OR pr.subtree_run_id = ANY (p_path))
$$;
