//! Independent checks of what the client sends: PKCE, DPoP proofs and
//! RFC 7523 assertions, with jsonwebtoken and ring directly.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

use super::AsConfig;

pub(super) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

/// RFC 7638 thumbprint of an EC public JWK.
fn thumbprint(jwk: &Value) -> String {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap_or(""),
        jwk["x"].as_str().unwrap_or(""),
        jwk["y"].as_str().unwrap_or("")
    );
    s256(&canonical)
}

/// Verifies a DPoP proof; returns (jkt, claims).
pub(super) fn verify_proof(
    proof: &str,
    method: &str,
    htu: &str,
) -> Result<(String, Value), String> {
    let header = jsonwebtoken::decode_header(proof).map_err(|e| format!("proof header: {e}"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err("typ is not dpop+jwt".into());
    }
    let jwk = header.jwk.ok_or("no jwk")?;
    let jwk_json = serde_json::to_value(&jwk).unwrap();
    if jwk_json.get("d").is_some() {
        return Err("private key in jwk".into());
    }
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("jwk: {e}"))?;
    let mut v = Validation::new(Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &v)
        .map_err(|e| format!("signature: {e}"))?
        .claims;
    if claims["htm"] != method {
        return Err(format!("htm {} != {method}", claims["htm"]));
    }
    if claims["htu"] != htu {
        return Err(format!("htu {} != {htu}", claims["htu"]));
    }
    let iat = claims["iat"].as_u64().ok_or("no iat")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if now.abs_diff(iat) > 300 {
        return Err("iat out of window".into());
    }
    if !claims["jti"].is_string() {
        return Err("no jti".into());
    }
    Ok((thumbprint(&jwk_json), claims))
}

/// Verifies an RFC 7523 assertion against the server's known keys, with
/// audience `aud`; returns its claims. An ID-JAG from the fake identity
/// provider (`id-jag-for|aud|resource`) is accepted as is.
pub(super) fn verify_assertion(s: &AsConfig, assertion: &str, aud: &str) -> Result<Value, String> {
    if let Some(rest) = assertion.strip_prefix("id-jag-for|") {
        let (a, resource) = rest.split_once('|').unwrap();
        if a != aud {
            return Err(format!("ID-JAG audience {a} != {aud}"));
        }
        return Ok(json!({"iss": "idp", "sub": "idp", "resource": resource}));
    }
    let mut last = String::from("no key");
    for (alg, key) in &s.assertion_keys {
        let mut v = Validation::new(*alg);
        v.set_audience(&[aud]);
        v.leeway = 5;
        v.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        match jsonwebtoken::decode::<Value>(assertion, key, &v) {
            Ok(d) => return Ok(d.claims),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("assertion rejected: {last}"))
}
