"""An independent OAuth 2.0 client (Authlib) against LockBench's token endpoint.

usage: authlib_client.py BASE_URL LOGIN_CODE
Prints one line per check; exits 0 when every check held, 1 otherwise.
"""
import sys

from authlib.integrations.requests_client import OAuth2Session, OAuthError

base, code = sys.argv[1], sys.argv[2]
token_url = base + "/v1/token"
failures = 0


def check(ok, what):
    global failures
    print(("ok " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


# A public client: no client secret, so no client authentication at the token endpoint.
session = OAuth2Session(client_id="lockbench-phone", token_endpoint_auth_method="none")
token = session.fetch_token(token_url, grant_type="authorization_code", code=code)
check(token["token_type"] == "Bearer", "authorization_code gives a Bearer token")
check(token["expires_in"] > 0 and "refresh_token" in token, "expires_in and refresh_token present")

keys = session.get(base + "/v1/keys")
check(keys.status_code == 200 and "cursor" in keys.json(), "the access token polls /v1/keys")

first_refresh = token["refresh_token"]
rotated = session.refresh_token(token_url, refresh_token=first_refresh)
check(rotated["refresh_token"] != first_refresh, "refresh_token grant rotates the refresh token")
check(session.get(base + "/v1/keys").status_code in (200, 204), "the new access token polls")

# Reuse of the first refresh token (outside the grace window the server was started with).
try:
    OAuth2Session(client_id="lockbench-phone", token_endpoint_auth_method="none").refresh_token(token_url, refresh_token=first_refresh)
    check(False, "reusing a rotated refresh token is refused")
except OAuthError as e:
    check(e.error == "invalid_grant", "reusing a rotated refresh token is refused: " + e.error)

# ... and the family is gone: the current refresh token no longer works either.
try:
    OAuth2Session(client_id="lockbench-phone", token_endpoint_auth_method="none").refresh_token(token_url, refresh_token=rotated["refresh_token"])
    check(False, "the family is revoked after reuse")
except OAuthError as e:
    check(e.error == "invalid_grant", "the family is revoked after reuse: " + e.error)

sys.exit(1 if failures else 0)
