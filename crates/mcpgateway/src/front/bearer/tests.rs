use super::discovery::{jwks_uri, metadata_urls};
use super::*;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use jsonwebtoken::{EncodingKey, Header};

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "http://127.0.0.1:8080/mcp";

struct Signer {
    key: EncodingKey,
    kid: String,
}

impl Signer {
    fn new(kid: &str) -> Signer {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        Signer {
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            kid: kid.into(),
        }
    }

    fn jwk(&self) -> Value {
        let mut jwk =
            serde_json::to_value(Jwk::from_encoding_key(&self.key, Algorithm::ES256).unwrap())
                .unwrap();
        jwk["kid"] = json!(self.kid);
        jwk["use"] = json!("sig");
        jwk
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }
}

fn now() -> i64 {
    jsonwebtoken::get_current_timestamp() as i64
}

fn claims() -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() + 300,
           "iat": now(), "scope": "mcp:tools files:read"})
}

fn keys_of(signers: &[&Signer]) -> Keys {
    let jwks = json!({"keys": signers.iter().map(|s| s.jwk()).collect::<Vec<_>>()});
    Keys::parse(jwks.to_string().as_bytes()).unwrap()
}

fn expected() -> Expected<'static> {
    Expected {
        issuer: ISSUER,
        audience: AUDIENCE,
    }
}

fn check(token: &str, keys: &Keys) -> Result<Grant, BearerError> {
    verify(token, keys, &expected())
}

#[test]
fn a_valid_token_grants_its_scopes() {
    let signer = Signer::new("k1");
    let grant = check(&signer.sign(&claims()), &keys_of(&[&signer])).unwrap();
    assert_eq!(grant.subject.as_deref(), Some("alice"));
    assert!(grant.has("mcp:tools") && grant.has("files:read"));
    let required = vec!["mcp:tools".to_owned(), "files:write".to_owned()];
    assert_eq!(grant.missing(&required), ["files:write"]);
}

#[test]
fn a_token_names_its_holder_by_subject_or_client_id_or_is_refused() {
    let signer = Signer::new("k1");
    let keys = keys_of(&[&signer]);
    let mut c = claims();
    c.as_object_mut().unwrap().remove("sub");
    c["client_id"] = json!("robot");
    let grant = check(&signer.sign(&c), &keys).unwrap();
    assert_eq!(
        (grant.subject, grant.client_id.as_deref()),
        (None, Some("robot"))
    );
    c.as_object_mut().unwrap().remove("client_id");
    c["azp"] = json!("robot-2");
    let grant = check(&signer.sign(&c), &keys).unwrap();
    assert_eq!(grant.client_id.as_deref(), Some("robot-2"));
    c.as_object_mut().unwrap().remove("azp");
    assert!(matches!(
        check(&signer.sign(&c), &keys),
        Err(BearerError::Claims(why)) if why.contains("names nobody")
    ));
}

#[test]
fn scopes_from_scp_and_audience_lists() {
    let signer = Signer::new("k1");
    let mut c = claims();
    c["aud"] = json!(["https://other.example", AUDIENCE]);
    c["scp"] = json!(["a", "b"]);
    c.as_object_mut().unwrap().remove("scope");
    let grant = check(&signer.sign(&c), &keys_of(&[&signer])).unwrap();
    assert_eq!(grant.scopes.iter().collect::<Vec<_>>(), ["a", "b"]);
}

#[test]
fn refusals() {
    let signer = Signer::new("k1");
    let keys = keys_of(&[&signer]);
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = claims();
        edit(&mut c);
        check(&signer.sign(&c), &keys)
    };
    assert_eq!(
        with(&|c| c["exp"] = json!(now() - 3600)),
        Err(BearerError::Expired)
    );
    assert_eq!(
        with(&|c| c["nbf"] = json!(now() + 3600)),
        Err(BearerError::NotYetValid)
    );
    assert_eq!(
        with(&|c| c["aud"] = json!("http://127.0.0.1:9/mcp")),
        Err(BearerError::WrongAudience)
    );
    assert_eq!(
        with(&|c| c["iss"] = json!("https://evil.example")),
        Err(BearerError::WrongIssuer)
    );
    assert_eq!(
        with(&|c| drop(c.as_object_mut().unwrap().remove("aud"))),
        Err(BearerError::Claims("no `aud`".into()))
    );
    assert_eq!(
        with(&|c| drop(c.as_object_mut().unwrap().remove("exp"))),
        Err(BearerError::Claims("no `exp`".into()))
    );
    // Within the leeway, an expired token still passes.
    let leeway = CLOCK_LEEWAY_SECONDS as i64;
    assert!(with(&|c| c["exp"] = json!(now() - leeway / 2)).is_ok());
}

#[test]
fn a_forged_signature_is_refused() {
    let signer = Signer::new("k1");
    let forger = Signer::new("k1");
    let keys = keys_of(&[&signer]);
    assert_eq!(
        check(&forger.sign(&claims()), &keys),
        Err(BearerError::BadSignature)
    );
    // The claims of a real token changed afterwards.
    let token = signer.sign(&claims());
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let mut c = claims();
    c["scope"] = json!("admin");
    use base64::Engine;
    parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(c.to_string());
    assert_eq!(
        check(&parts.join("."), &keys),
        Err(BearerError::BadSignature)
    );
}

#[test]
fn an_unknown_key_and_a_symmetric_token_are_refused() {
    let signer = Signer::new("k1");
    let other = Signer::new("k2");
    assert_eq!(
        check(&other.sign(&claims()), &keys_of(&[&signer])),
        Err(BearerError::UnknownKey {
            kid: Some("k2".into())
        })
    );
    let hmac = EncodingKey::from_secret(b"a shared secret").unwrap();
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("k1".into());
    let token = jsonwebtoken::encode(&header, &claims(), &hmac).unwrap();
    assert_eq!(
        check(&token, &keys_of(&[&signer])),
        Err(BearerError::Algorithm("HS256".into()))
    );
}

#[test]
fn malformed_and_oversized_tokens_are_refused() {
    let keys = keys_of(&[&Signer::new("k1")]);
    assert!(matches!(
        check("not a jwt", &keys),
        Err(BearerError::Malformed(_))
    ));
    assert!(matches!(
        check("a.b.c", &keys),
        Err(BearerError::Malformed(_))
    ));
    let long = "a".repeat(MAX_TOKEN_BYTES + 1);
    assert_eq!(
        check(&long, &keys),
        Err(BearerError::TooLong {
            size: MAX_TOKEN_BYTES + 1,
            limit: MAX_TOKEN_BYTES
        })
    );
}

#[test]
fn bad_key_sets_are_refused() {
    let signer = Signer::new("k1");
    let big = json!({"keys": [signer.jwk()], "padding": "x".repeat(MAX_JWKS_BYTES)});
    assert_eq!(
        Keys::parse(big.to_string().as_bytes()).unwrap_err(),
        BearerError::TooLarge {
            what: "JWKS",
            limit: MAX_JWKS_BYTES
        }
    );
    let many = json!({"keys": vec![signer.jwk(); MAX_JWKS_KEYS + 1]});
    assert_eq!(
        Keys::parse(many.to_string().as_bytes())
            .unwrap_err()
            .to_string(),
        format!(
            "the issuer's JWKS: {} keys, over the limit of {MAX_JWKS_KEYS}",
            MAX_JWKS_KEYS + 1
        )
    );
    for malformed in [
        &b"{"[..],
        b"[]",
        br#"{"keys": {}}"#,
        br#"{"keys": [{"kty": "RSA"}]}"#,
    ] {
        assert!(
            matches!(Keys::parse(malformed), Err(BearerError::Jwks(_))),
            "{malformed:?}"
        );
    }
    // A symmetric key is never a verification key, nor is one for encryption.
    let oct = json!({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "k1"}]});
    let mut enc = signer.jwk();
    enc["use"] = json!("enc");
    for unusable in [oct, json!({"keys": [enc]})] {
        assert_eq!(
            Keys::parse(unusable.to_string().as_bytes())
                .unwrap_err()
                .to_string(),
            "the issuer's JWKS: no usable signing key"
        );
    }
}

#[test]
fn challenges() {
    let url = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp";
    let none = Challenge::refused(&BearerError::Missing, url, &[]);
    assert_eq!(none.status, 401);
    assert_eq!(
        none.www_authenticate,
        format!("Bearer resource_metadata=\"{url}\"")
    );
    let expired = Challenge::refused(&BearerError::Expired, url, &["mcp:tools".into()]);
    assert_eq!(
        expired.www_authenticate,
        format!("Bearer resource_metadata=\"{url}\", scope=\"mcp:tools\", error=\"invalid_token\", error_description=\"the access token has expired\"")
    );
    let down = BearerError::Unreachable {
        url: "https://auth/jwks".into(),
        reason: "refused".into(),
    };
    assert_eq!(Challenge::refused(&down, url, &[]).status, 503);
    let scope = Challenge::insufficient(&["files:write"], url);
    assert_eq!(scope.status, 403);
    assert_eq!(
        scope.www_authenticate,
        format!("Bearer error=\"insufficient_scope\", scope=\"files:write\", resource_metadata=\"{url}\"")
    );
}

#[test]
fn bearer_headers() {
    assert_eq!(token_of(Some("Bearer abc")), Ok("abc"));
    assert_eq!(token_of(Some("bearer  abc ")), Ok("abc"));
    assert_eq!(token_of(Some("Basic abc")), Err(BearerError::Missing));
    assert_eq!(token_of(Some("Bearer ")), Err(BearerError::Missing));
    assert_eq!(token_of(None), Err(BearerError::Missing));
}

#[test]
fn metadata_locations() {
    assert_eq!(
        metadata_url("http://127.0.0.1:8080/mcp").as_deref(),
        Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(
        metadata_url("https://mcp.example.com/").as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    assert_eq!(metadata_url("mcp"), None);
    let urls = |issuer: &str| -> Vec<String> {
        metadata_urls(&reqwest::Url::parse(issuer).unwrap())
            .iter()
            .map(|u| u.to_string())
            .collect()
    };
    assert_eq!(
        urls("https://auth.example.com/tenant1"),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        urls("https://auth.example.com"),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://auth.example.com/.well-known/openid-configuration",
        ]
    );
}

#[test]
fn issuer_metadata_is_checked() {
    let doc = |v: Value| v.to_string().into_bytes();
    let ok = doc(json!({"issuer": ISSUER, "jwks_uri": "https://keys.example.com/jwks"}));
    assert_eq!(
        jwks_uri(&ok, ISSUER).unwrap().as_str(),
        "https://keys.example.com/jwks"
    );
    let other =
        doc(json!({"issuer": "https://evil.example", "jwks_uri": "https://evil.example/jwks"}));
    assert_eq!(
        jwks_uri(&other, ISSUER).unwrap_err().to_string(),
        "the issuer's metadata: it names issuer https://evil.example, not https://auth.example.com"
    );
    let plain = doc(json!({"issuer": "http://127.0.0.1:3000", "jwks_uri": "http://10.0.0.1/jwks"}));
    assert!(matches!(
        jwks_uri(&plain, "http://127.0.0.1:3000"),
        Err(BearerError::Metadata(_))
    ));
    let none = doc(json!({"issuer": ISSUER}));
    assert_eq!(
        jwks_uri(&none, ISSUER).unwrap_err().to_string(),
        "the issuer's metadata: no jwks_uri"
    );
    assert!(matches!(
        jwks_uri(b"<html>", ISSUER),
        Err(BearerError::Metadata(_))
    ));
    let big = vec![b' '; MAX_METADATA_BYTES + 1];
    assert_eq!(
        jwks_uri(&big, ISSUER),
        Err(BearerError::TooLarge {
            what: "metadata",
            limit: MAX_METADATA_BYTES
        })
    );
}

#[test]
fn issuers_must_be_secure() {
    let verifier = |issuer: &str| {
        Verifier::new(
            ResourceAuth {
                issuer: issuer.into(),
                ..ResourceAuth::default()
            },
            AUDIENCE.into(),
        )
    };
    assert!(verifier("https://auth.example.com").is_ok());
    assert!(verifier("http://127.0.0.1:3000").is_ok());
    assert!(verifier("http://localhost:3000").is_ok());
    assert!(verifier("http://auth.example.com").is_err());
    assert!(verifier("https://auth.example.com?x=1").is_err());
    assert!(verifier("auth.example.com").is_err());
}

#[test]
fn tool_scopes() {
    let auth = ResourceAuth {
        issuer: ISSUER.into(),
        tool_scopes: vec![
            ToolScope {
                tools: "files__write*".into(),
                scope: "files:write".into(),
            },
            ToolScope {
                tools: "files__*".into(),
                scope: "files:read".into(),
            },
        ],
        scopes: vec!["mcp".into()],
        ..ResourceAuth::default()
    };
    let rules: std::sync::Arc<[ToolScope]> = auth.tool_scopes.clone().into();
    let holder = |scopes: &[&str]| {
        let grant = Grant {
            subject: Some("someone".into()),
            client_id: None,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        };
        crate::sessions::principal::Principal::oauth(ISSUER, &grant, &rules)
    };
    let reader = holder(&["files:read"]);
    assert_eq!(reader.missing_scope("files__read"), None);
    assert_eq!(
        reader.missing_scope("files__write_file"),
        Some("files:write")
    );
    assert_eq!(holder(&[]).missing_scope("files__read"), Some("files:read"));
    assert_eq!(holder(&[]).missing_scope("echo__echo"), None);
    // A tool two rules match needs both scopes.
    let writer = holder(&["files:write"]);
    assert_eq!(
        writer.missing_scope("files__write_file"),
        Some("files:read")
    );
    let both = holder(&["files:write", "files:read"]);
    assert_eq!(both.missing_scope("files__write_file"), None);
    assert_eq!(
        auth.metadata(AUDIENCE),
        json!({"resource": AUDIENCE, "authorization_servers": [ISSUER],
               "scopes_supported": ["mcp", "files:write", "files:read"],
               "bearer_methods_supported": ["header"]})
    );
}

/// An issuer on loopback serving its metadata and a JWKS that the test changes, counting the
/// JWKS fetches.
struct Issuer {
    url: String,
    jwks: std::sync::Arc<std::sync::Mutex<String>>,
    fetches: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

async fn issuer() -> Issuer {
    use axum::routing::get;
    use std::sync::atomic::Ordering;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let jwks = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let fetches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
    let (served, counted) = (jwks.clone(), fetches.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || async move { metadata }),
        )
        .route(
            "/jwks",
            get(move || async move {
                counted.fetch_add(1, Ordering::SeqCst);
                let body = served.lock().unwrap().clone();
                body
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Issuer { url, jwks, fetches }
}

impl Issuer {
    fn publish(&self, signers: &[&Signer]) {
        let keys: Vec<Value> = signers.iter().map(|s| s.jwk()).collect();
        *self.jwks.lock().unwrap() = json!({"keys": keys}).to_string();
    }

    fn fetches(&self) -> usize {
        self.fetches.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn verifier(&self) -> Verifier {
        let auth = ResourceAuth {
            issuer: self.url.clone(),
            ..ResourceAuth::default()
        };
        Verifier::new(auth, AUDIENCE.into()).unwrap()
    }

    fn token(&self, signer: &Signer) -> String {
        let mut c = claims();
        c["iss"] = json!(self.url);
        signer.sign(&c)
    }
}

#[tokio::test]
async fn unknown_key_ids_fetch_the_keys_again_at_a_bounded_rate() {
    let issuer = issuer().await;
    let (k1, k2) = (Signer::new("k1"), Signer::new("k2"));
    issuer.publish(&[&k1]);
    let verifier = issuer.verifier();
    assert!(verifier.check(&issuer.token(&k1)).await.is_ok());
    assert_eq!(issuer.fetches(), 1);
    // Forged key ids within the refresh interval: refused, and no fetch.
    for n in 0..5 {
        let forger = Signer::new(&format!("forged-{n}"));
        assert_eq!(
            verifier.check(&issuer.token(&forger)).await,
            Err(BearerError::UnknownKey {
                kid: Some(format!("forged-{n}"))
            })
        );
    }
    assert!(verifier.check(&issuer.token(&k1)).await.is_ok());
    assert_eq!(issuer.fetches(), 1);

    // The issuer rotates: a token of the new key fetches the keys again.
    let rotating = issuer.verifier().refreshing_always();
    assert!(rotating.check(&issuer.token(&k1)).await.is_ok());
    issuer.publish(&[&k1, &k2]);
    assert!(rotating.check(&issuer.token(&k2)).await.is_ok());
    assert_eq!(issuer.fetches(), 3);
    // Known keys fetch nothing.
    assert!(rotating.check(&issuer.token(&k1)).await.is_ok());
    assert_eq!(issuer.fetches(), 3);
}

#[tokio::test]
async fn an_issuer_with_bad_keys_is_its_own_fault() {
    let issuer = issuer().await;
    let signer = Signer::new("k1");
    *issuer.jwks.lock().unwrap() =
        json!({"keys": [signer.jwk()], "pad": "x".repeat(MAX_JWKS_BYTES)}).to_string();
    let refused = issuer
        .verifier()
        .check(&issuer.token(&signer))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        BearerError::TooLarge {
            what: "JWKS",
            limit: MAX_JWKS_BYTES
        }
    );
    let url = "http://x/.well-known/oauth-protected-resource";
    assert_eq!(Challenge::refused(&refused, url, &[]).status, 503);
    *issuer.jwks.lock().unwrap() = "not json".into();
    let refused = issuer
        .verifier()
        .check(&issuer.token(&signer))
        .await
        .unwrap_err();
    assert!(matches!(refused, BearerError::Jwks(_)), "{refused}");
    // An issuer whose metadata is nowhere.
    let nowhere = Verifier::new(
        ResourceAuth {
            issuer: format!("{}/tenant", issuer.url),
            ..ResourceAuth::default()
        },
        AUDIENCE.into(),
    )
    .unwrap();
    let refused = nowhere.check(&issuer.token(&signer)).await.unwrap_err();
    assert!(
        matches!(refused, BearerError::Unreachable { .. }),
        "{refused}"
    );
}
