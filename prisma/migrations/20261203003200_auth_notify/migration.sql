-- Announces every change that can take authority from an API key on `quiesce_auth`: the API process
-- empties its key cache on the notice (docs/design/api-key-cache.md). Triggers, not calls in lib/dal, so no
-- writer can skip it; NOTIFY is sent at COMMIT. The payload names the table, and the row for an update
-- (`api_keys:key_…`); last_used_at (written by authentication itself) does not notify.

CREATE FUNCTION quiesce_auth_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('quiesce_auth', CASE WHEN TG_LEVEL = 'ROW' THEN TG_TABLE_NAME || ':' || NEW.id ELSE TG_TABLE_NAME END);
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_auth_changed AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
     OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
     OR OLD.scopes IS DISTINCT FROM NEW.scopes
     OR OLD.kind IS DISTINCT FROM NEW.kind
     OR OLD.user_id IS DISTINCT FROM NEW.user_id
     OR OLD.team_id IS DISTINCT FROM NEW.team_id
     OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash)
  EXECUTE FUNCTION quiesce_auth_changed();
CREATE TRIGGER api_keys_auth_removed AFTER DELETE OR TRUNCATE ON api_keys FOR EACH STATEMENT
  EXECUTE FUNCTION quiesce_auth_changed();

CREATE TRIGGER memberships_auth_changed AFTER UPDATE ON memberships FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role
     OR OLD.team_id IS DISTINCT FROM NEW.team_id
     OR OLD.user_id IS DISTINCT FROM NEW.user_id)
  EXECUTE FUNCTION quiesce_auth_changed();
-- A new membership can give a key's user a role it did not have; a removed one takes it away.
CREATE TRIGGER memberships_auth_added_removed AFTER INSERT OR DELETE OR TRUNCATE ON memberships FOR EACH STATEMENT
  EXECUTE FUNCTION quiesce_auth_changed();

CREATE TRIGGER users_auth_changed AFTER UPDATE ON users FOR EACH ROW
  WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at)
  EXECUTE FUNCTION quiesce_auth_changed();
CREATE TRIGGER users_auth_removed AFTER DELETE OR TRUNCATE ON users FOR EACH STATEMENT
  EXECUTE FUNCTION quiesce_auth_changed();
