"""fastmcp servers that require authorization, for `cargo xtask interop`.

Usage: fastmcp_auth.py MODE PORT   (endpoint /mcp on 127.0.0.1 only)

  oauth   fastmcp's in-memory OAuth provider: protected resource and
          authorization server metadata, dynamic client registration, and an
          authorize endpoint that redirects straight back with a code.
  bearer  one static token, the value of MCPWIRE_INTEROP_TOKEN.
  jwt     RS256 JWTs checked against a key pair made at start; a token for
          the client is written to the file named by MCPWIRE_INTEROP_TOKEN_FILE
          before the server listens.
"""

import os
import sys

from fastmcp import FastMCP
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp.server.auth.providers.jwt import JWTVerifier, RSAKeyPair, StaticTokenVerifier
from mcp.server.auth.settings import ClientRegistrationOptions

mode, port = sys.argv[1], int(sys.argv[2])
base = f"http://127.0.0.1:{port}"

if mode == "oauth":
    auth = InMemoryOAuthProvider(
        base_url=base,
        client_registration_options=ClientRegistrationOptions(enabled=True),
    )
elif mode == "bearer":
    token = os.environ["MCPWIRE_INTEROP_TOKEN"]
    auth = StaticTokenVerifier(tokens={token: {"client_id": "mcpwire-interop", "scopes": []}})
elif mode == "jwt":
    issuer, audience = "https://issuer.mcpwire-interop.test", "mcpwire-interop"
    keys = RSAKeyPair.generate()
    auth = JWTVerifier(public_key=keys.public_key, issuer=issuer, audience=audience)
    token = keys.create_token(subject="mcpwire", issuer=issuer, audience=audience)
    path = os.environ["MCPWIRE_INTEROP_TOKEN_FILE"]
    with open(path + ".tmp", "w") as f:
        f.write(token)
    os.replace(path + ".tmp", path)
else:
    sys.exit(f"unknown mode {mode}")

server = FastMCP("mcpwire-fastmcp-auth", auth=auth)


@server.tool
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


server.run(transport="http", host="127.0.0.1", port=port, path="/mcp")
