//! [`TokenSet`]: the tokens one authorization produced, with an absolute
//! expiry, and [`RefreshTiming`]: when to renew them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::secret::Secret;

/// How an access token is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TokenType {
    /// `Authorization: Bearer <token>` (RFC 6750).
    Bearer,
    /// `Authorization: DPoP <token>` plus a `DPoP` proof per request (RFC 9449).
    #[serde(rename = "DPoP")]
    Dpop,
}

impl TokenType {
    /// Reads a token response's `token_type` (case-insensitive; anything
    /// unknown is treated as `Bearer`, what RFC 6750 servers mean).
    pub(crate) fn parse(s: &str) -> Self {
        if s.eq_ignore_ascii_case("dpop") {
            TokenType::Dpop
        } else {
            TokenType::Bearer
        }
    }

    /// The `Authorization` scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            TokenType::Bearer => "Bearer",
            TokenType::Dpop => "DPoP",
        }
    }
}

/// The tokens one authorization produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenSet {
    /// The access token.
    pub access_token: Secret,
    /// How to present it.
    pub token_type: TokenType,
    /// The refresh token, if the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// When the token was received.
    #[serde(with = "unix_seconds")]
    pub issued_at: SystemTime,
    /// When the access token stops working (already shortened by the clock
    /// skew allowance); `None` if the server gave no lifetime.
    #[serde(
        default,
        with = "unix_seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (the ones asked for, if the server did not say).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl TokenSet {
    /// A token received now.
    pub(crate) fn new(
        access_token: Secret,
        token_type: TokenType,
        refresh_token: Option<Secret>,
        expires_in: Option<Duration>,
        scopes: Vec<String>,
        timing: &RefreshTiming,
    ) -> Self {
        let issued_at = SystemTime::now();
        Self {
            access_token,
            token_type,
            refresh_token,
            issued_at,
            expires_at: expires_in.map(|d| timing.expiry(issued_at, d)),
            scopes,
        }
    }

    /// The result of a refresh: `newer`, keeping this set's refresh token if
    /// the server sent none (it may not rotate it) and this set's scopes if
    /// the server did not say.
    pub(crate) fn refreshed(&self, mut newer: TokenSet) -> TokenSet {
        if newer.refresh_token.is_none() {
            newer.refresh_token = self.refresh_token.clone();
        }
        if newer.scopes.is_empty() {
            newer.scopes = self.scopes.clone();
        }
        newer
    }

    /// Whether the access token has expired at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|e| now >= e)
    }
}

/// When tokens are renewed.
///
/// A token is renewed `early` (default 5 minutes) before its expiry, or at
/// half its lifetime if that is sooner (a 2-minute token is renewed after a
/// minute, not on every request). The expiry itself is taken `skew` (default
/// 30 seconds) before what the server said, for clocks that disagree and for
/// the time the answer took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshTiming {
    /// How long before expiry to renew.
    pub early: Duration,
    /// The clock-skew allowance.
    pub skew: Duration,
}

impl Default for RefreshTiming {
    fn default() -> Self {
        Self {
            early: Duration::from_secs(300),
            skew: Duration::from_secs(30),
        }
    }
}

/// The longest token lifetime taken from a server (ten years).
const MAX_LIFETIME: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

impl RefreshTiming {
    /// The absolute expiry of a token issued at `issued_at` for `lifetime`.
    pub fn expiry(&self, issued_at: SystemTime, lifetime: Duration) -> SystemTime {
        // A server may claim any `expires_in` (u64::MAX seconds overflows
        // every clock): a lifetime is taken as at most ten years.
        let lifetime = lifetime.min(MAX_LIFETIME);
        let effective = lifetime.checked_sub(self.skew).unwrap_or(lifetime / 2);
        issued_at + effective
    }

    /// Whether `token` should be renewed at `now`.
    pub fn due(&self, token: &TokenSet, now: SystemTime) -> bool {
        let Some(expires_at) = token.expires_at else {
            return false;
        };
        let lifetime = expires_at
            .duration_since(token.issued_at)
            .unwrap_or_default();
        let lead = self.early.min(lifetime / 2);
        now + lead >= expires_at
    }
}

mod unix_seconds {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let secs = u64::deserialize(d)?;
        Ok(UNIX_EPOCH + Duration::from_secs(secs))
    }
}

mod unix_seconds_opt {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        t: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => {
                s.serialize_some(&t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs())
            }
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        let secs = Option::<u64>::deserialize(d)?;
        Ok(secs.map(|s| UNIX_EPOCH + Duration::from_secs(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(lifetime: Option<u64>, timing: &RefreshTiming) -> TokenSet {
        TokenSet::new(
            Secret::new("a"),
            TokenType::Bearer,
            Some(Secret::new("r1")),
            lifetime.map(Duration::from_secs),
            vec!["s".into()],
            timing,
        )
    }

    #[test]
    fn an_hour_token_is_renewed_five_minutes_and_the_skew_early() {
        let timing = RefreshTiming::default();
        let t = token(Some(3600), &timing);
        let at = |secs| t.issued_at + Duration::from_secs(secs);
        // Expiry: 3600 - 30 = 3570 s; renewal from 3570 - 300 = 3270 s.
        assert!(!timing.due(&t, at(3269)));
        assert!(timing.due(&t, at(3270)));
        assert!(!t.is_expired(at(3569)));
        assert!(t.is_expired(at(3570)));
    }

    #[test]
    fn a_short_token_is_renewed_at_half_its_life() {
        let timing = RefreshTiming::default();
        let t = token(Some(120), &timing);
        // Expiry 90 s; lead min(300, 45) = 45 s; due from 45 s.
        assert!(!timing.due(&t, t.issued_at + Duration::from_secs(44)));
        assert!(timing.due(&t, t.issued_at + Duration::from_secs(45)));
        // A lifetime shorter than the skew keeps half of it.
        let tiny = token(Some(10), &timing);
        assert_eq!(
            tiny.expires_at,
            Some(tiny.issued_at + Duration::from_secs(5))
        );
        // No lifetime: never due, never expired.
        let forever = token(None, &timing);
        assert!(!timing.due(&forever, forever.issued_at + Duration::from_secs(1 << 30)));
    }

    #[test]
    fn a_refresh_without_a_new_refresh_token_keeps_the_old_one() {
        let timing = RefreshTiming::default();
        let old = token(Some(3600), &timing);
        let mut newer = token(Some(3600), &timing);
        newer.refresh_token = None;
        newer.scopes.clear();
        let merged = old.refreshed(newer);
        assert_eq!(merged.refresh_token, Some(Secret::new("r1")));
        assert_eq!(merged.scopes, ["s"]);
        let mut rotated = token(Some(3600), &timing);
        rotated.refresh_token = Some(Secret::new("r2"));
        assert_eq!(
            old.refreshed(rotated).refresh_token,
            Some(Secret::new("r2"))
        );
    }

    #[test]
    fn token_sets_round_trip_with_absolute_expiries() {
        let t = token(Some(3600), &RefreshTiming::default());
        let json = serde_json::to_value(&t).unwrap();
        assert!(json["expires_at"].as_u64().unwrap() > 1_600_000_000);
        let back: TokenSet = serde_json::from_value(json).unwrap();
        assert_eq!(back.access_token, t.access_token);
        let secs = |at: SystemTime| at.duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(secs(back.issued_at), secs(t.issued_at));
        assert_eq!(
            back.expires_at
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs(),
            t.expires_at
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        );
        assert_eq!(format!("{t:?}").matches("redacted").count(), 2);
    }

    #[test]
    fn a_lifetime_is_taken_up_to_ten_years_and_cut_there() {
        let timing = RefreshTiming {
            early: Duration::ZERO,
            skew: Duration::ZERO,
        };
        let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let year = Duration::from_secs(365 * 24 * 3600);
        assert_eq!(timing.expiry(at, year * 5), at + year * 5);
        assert_eq!(timing.expiry(at, year * 20), at + year * 10);
        assert_eq!(timing.expiry(at, Duration::MAX), at + year * 10);
    }
}
