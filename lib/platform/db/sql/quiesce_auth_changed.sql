CREATE OR REPLACE FUNCTION quiesce_auth_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('quiesce_auth', CASE WHEN TG_LEVEL = 'ROW' THEN TG_TABLE_NAME || ':' || NEW.id ELSE TG_TABLE_NAME END);
  RETURN NULL;
END
$$;
