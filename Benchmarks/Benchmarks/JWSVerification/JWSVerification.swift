import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Benchmark
import Crypto
import Foundation
import X509

/// JWS verification with the chain cached, against the raw P-256 signature check it is built on.
///
/// All three benchmarks work on the same signed transaction. The target: verifying a JWS whose
/// chain is cached (compact form, header, chain validity at the signing date, app claims, ES256
/// signature) runs at no less than 80% of the rate of the bare ECDSA check over the same bytes,
/// because the chain work is done once per signing certificate, not once per transaction. The
/// third benchmark adds decoding the whole transaction model, to show what that costs on top.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 100_000
    )

    let fixture = Fixture.make()

    Benchmark("JWS verify, chain cached") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                try await fixture.verifier.verify(fixture.jws, as: SignedClaims.self, checking: [.bundleID, .environment]))
        }
    }

    Benchmark("JWS verify + decode JWSTransactionDecodedPayload, chain cached") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                try await fixture.verifier.verify(
                    fixture.jws, as: JWSTransactionDecodedPayload.self, checking: [.bundleID, .environment]))
        }
    }

    // What a server pays when it builds its verifier per request instead of once at start: the
    // P-384 chain (leaf and intermediate) is checked again every time.
    Benchmark("JWS verify, new verifier per request (chain re-checked)") { benchmark in
        for _ in benchmark.scaledIterations {
            let verifier = try SignedDataVerifier(
                rootCertificates: [fixture.root], bundleID: "com.example.kakin", appAppleID: nil,
                environment: .sandbox)
            blackHole(try await verifier.verify(fixture.jws, as: SignedClaims.self, checking: [.bundleID, .environment]))
        }
    }

    Benchmark("P-256 signature verify (raw)") { benchmark in
        for _ in benchmark.scaledIterations {
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: fixture.signatureBytes)
            blackHole(fixture.leafKey.isValidSignature(signature, for: fixture.signingInput))
        }
    }
}

struct Fixture: Sendable {
    let jws: String
    let root: Certificate
    let verifier: SignedDataVerifier
    let leafKey: P256.Signing.PublicKey
    let signatureBytes: Data
    let signingInput: Data

    static func make() -> Fixture {
        // Whole milliseconds, as the App Store signs dates.
        let now = Date(epochMilliseconds: Date().epochMilliseconds)
        let authority = try! SandboxCertificateAuthority.generate(now: now)
        let transaction = JWSTransactionDecodedPayload(
            transactionID: "2000000123456789", originalTransactionID: "2000000123456789",
            webOrderLineItemID: "2000000012345678", bundleID: "com.example.kakin",
            productID: "com.example.kakin.premium.monthly", subscriptionGroupIdentifier: "21345678",
            purchaseDate: now, originalPurchaseDate: now, expiresDate: now.addingTimeInterval(30 * 86_400),
            quantity: 1, type: .autoRenewableSubscription, inAppOwnershipType: .purchased, signedDate: now,
            environment: .sandbox, storefront: "USA", storefrontID: "143441", transactionReason: .purchase,
            currency: "USD", price: 4990, appTransactionID: "704289572311507924")
        let jws = try! JWSSigner(identity: authority.signingIdentity).sign(transaction)
        let verifier = try! SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: nil, environment: .sandbox)
        let parts = jws.split(separator: ".")
        let signatureBytes = decodeBase64URL(parts[2])
        return Fixture(
            jws: jws, root: authority.root, verifier: verifier, leafKey: authority.leafKey.publicKey,
            signatureBytes: signatureBytes,
            signingInput: Data("\(parts[0]).\(parts[1])".utf8))
    }

    static func decodeBase64URL(_ text: Substring) -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)!
    }
}
