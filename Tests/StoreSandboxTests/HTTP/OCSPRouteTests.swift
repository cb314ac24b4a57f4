import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing
@_spi(FixedExpiryValidationTime) import X509

/// The sandbox's OCSP responder (`/ocsp`) and certificate control routes (`/v1/control/ca`).
@Suite struct OCSPRouteTests {
    static let now = EngineFixture.start
    static let ocspURL = "http://127.0.0.1:9/ocsp"

    static func makeService(
        authority: SandboxCertificateAuthority? = nil, directory: URL? = nil
    ) throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: authority ?? SandboxCertificateAuthority.generate(now: now, ocspURL: ocspURL),
            clock: .manual(at: now), authorityDirectory: directory, realClock: { now })
        return SandboxService(engine: engine, catalog: catalog)
    }

    static func request(
        about certificate: Certificate, issuedBy issuer: Certificate, hash: OCSPHashAlgorithm = .sha1,
        nonce: [UInt8]? = nil
    ) throws -> [UInt8] {
        try OCSPRequestMessage(
            certificateIDs: [OCSPCertificateID(certificate: certificate, issuer: issuer, hashAlgorithm: hash)],
            nonce: nonce
        ).derEncoded()
    }

    static func post(_ der: [UInt8], _ client: some TestClientProtocol) async throws -> OCSPResponseMessage {
        let response = try await client.execute(
            uri: "/ocsp", method: .post, headers: [.contentType: "application/ocsp-request"],
            body: ByteBuffer(bytes: der))
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "application/ocsp-response")
        return try OCSPResponseMessage(derEncoded: Array(buffer: response.body))
    }

    static func object(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
    }

    static func hex(_ serial: Certificate.SerialNumber) -> String {
        serial.bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The leaf certificate in a JWS's `x5c`.
    static func leaf(of jws: String) throws -> Certificate {
        let first = try #require(try CompactJWS(jws).header().certificateChain?.first)
        return try Certificate(derEncoded: Array(try #require(Data(base64Encoded: first))))
    }

    @Test func postAndGetAnswerGoodWithTheNonceEchoed() async throws {
        let service = try Self.makeService()
        let authority = service.engine.authority
        try await Application(router: service.router()).test(.router) { client in
            let nonce = OCSPRequestMessage.randomNonce()
            let leaf = try await Self.post(
                try Self.request(about: authority.leaf, issuedBy: authority.intermediate, nonce: nonce), client)
            #expect(leaf.status == .successful)
            #expect(leaf.answers.map(\.status) == [.good])
            #expect(leaf.answers[0].thisUpdate == Self.now)
            #expect(leaf.answers[0].nextUpdate == Self.now.addingTimeInterval(3_600))
            #expect(leaf.nonce == nonce)

            // RFC 6960 appendix A.1: GET with the request in base64, URL-encoded ('/' and '+' too).
            let der = try Self.request(about: authority.intermediate, issuedBy: authority.root, hash: .sha256)
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let path = try #require(
                Data(der).base64EncodedString().addingPercentEncoding(withAllowedCharacters: allowed))
            let got = try await client.execute(uri: "/ocsp/\(path)", method: .get)
            #expect(got.status == .ok)
            #expect(got.headers[.contentType] == "application/ocsp-response")
            let intermediate = try OCSPResponseMessage(derEncoded: Array(buffer: got.body))
            #expect(intermediate.answers.map(\.status) == [.good])
            #expect(intermediate.answers.first?.certificateID.hashAlgorithm == .sha256)
            // Unencoded slashes in the base64 are read too.
            let raw = try await client.execute(uri: "/ocsp/\(Data(der).base64EncodedString())", method: .get)
            #expect(try OCSPResponseMessage(derEncoded: Array(buffer: raw.body)).answers.map(\.status) == [.good])
        }
    }

    @Test func aMalformedRequestIsAnsweredMalformedRequest() async throws {
        let service = try Self.makeService()
        try await Application(router: service.router()).test(.router) { client in
            #expect(try await Self.post([0x30, 0x03, 0x02, 0x01, 0x01], client).status == .malformedRequest)
            #expect(try await Self.post([], client).status == .malformedRequest)
            for path in ["/ocsp/not-base64!", "/ocsp/AAAA"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .ok)
                #expect(try OCSPResponseMessage(derEncoded: Array(buffer: response.body)).status == .malformedRequest)
            }
            let foreign = TestAuthorities.foreign
            let unauthorized = try await Self.post(
                try Self.request(about: foreign.leaf, issuedBy: foreign.intermediate), client)
            #expect(unauthorized.status == .unauthorized)
        }
    }

    @Test func revokingTheLeafRotatesWhatIsSignedAndTheOldLeafIsRevoked() async throws {
        let service = try Self.makeService()
        let engine = service.engine
        let before = engine.authority
        let tester = try await engine.createTester(name: "ca@example.com")
        try await Application(router: service.router()).test(.router) { client in
            let first = try #require(
                try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd"))
                    .transaction)
            let signedBefore = try engine.signer.signTransaction(first, at: Self.now)
            #expect(try Self.leaf(of: signedBefore) == before.leaf)

            let revoked = try await client.execute(
                uri: "/v1/control/ca/revoke", method: .post,
                body: ByteBuffer(string: #"{"certificate": "leaf"}"#))
            #expect(revoked.status == .ok)
            let body = Self.object(revoked.body)
            let revokedList = try #require(body["revoked"] as? [[String: Any]])
            #expect(revokedList.map { $0["serialNumber"] as? String } == [Self.hex(before.leaf.serialNumber)])
            #expect(revokedList.first?["status"] as? String == "revoked")
            #expect(revokedList.first?["kind"] as? String == "leaf")
            #expect(revokedList.first?["revocationDate"] as? Double == Self.now.timeIntervalSince1970 * 1_000)
            let current = try #require(body["current"] as? [[String: Any]])
            #expect(current.map { $0["kind"] as? String } == ["root", "intermediate", "leaf"])
            let after = engine.authority
            #expect(after.leaf != before.leaf && after.intermediate == before.intermediate && after.root == before.root)
            #expect(current[2]["serialNumber"] as? String == Self.hex(after.leaf.serialNumber))
            #expect(current[2]["subject"] as? String == String(describing: after.leaf.subject))
            #expect(current[2]["notValidAfter"] as? Double == after.leaf.notValidAfter.timeIntervalSince1970 * 1_000)
            #expect(current[2]["ocspURL"] as? String == Self.ocspURL)

            // What is signed from now on carries the new leaf, and still verifies under the same root.
            let payment = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: ByteBuffer(string: #"{"testerID": "\#(tester.id)", "productID": "com.example.kakin.unlock"}"#))
            let jws = try #require(
                (Self.object(payment.body)["transaction"] as? [String: Any])?["jwsRepresentation"] as? String)
            #expect(try Self.leaf(of: jws) == after.leaf)
            let verifier = try SandboxSigner(
                authority: before, bundleID: ExampleApp.bundleID, appAppleID: ExampleApp.appAppleID
            ).makeVerifier(now: { Self.now })
            await #expect(try verifier.verifyTransaction(jws).productID == "com.example.kakin.unlock")
            let receipt = try await engine.appReceipt(for: tester.id, deviceIdentifier: UUID())
            #expect(try SignedAppReceipt(bytes: receipt).signerCertificate == after.leaf)

            // The responder: the old leaf revoked, the new one good.
            let old = try await Self.post(try Self.request(about: before.leaf, issuedBy: before.intermediate), client)
            #expect(old.answers.map(\.status) == [.revoked(at: Self.now)])
            let new = try await Self.post(try Self.request(about: after.leaf, issuedBy: after.intermediate), client)
            #expect(new.answers.map(\.status) == [.good])

            let listed = Self.object(try await client.execute(uri: "/v1/control/ca", method: .get).body)
            #expect((listed["revoked"] as? [[String: Any]])?.count == 1)
            #expect(listed["ocspURL"] as? String == Self.ocspURL)
            #expect(listed["responderAvailable"] as? Bool == true)

            // Then the intermediate: it and its leaf go, the root stays.
            let again = try await client.execute(
                uri: "/v1/control/ca/revoke", method: .post,
                body: ByteBuffer(string: #"{"certificate": "intermediate"}"#))
            let twice = try #require(Self.object(again.body)["revoked"] as? [[String: Any]])
            #expect(twice.map { $0["kind"] as? String } == ["leaf", "intermediate"])
            #expect(
                twice.map { $0["serialNumber"] as? String }
                    == [Self.hex(after.leaf.serialNumber), Self.hex(after.intermediate.serialNumber)])
            #expect(engine.authority.root == before.root && engine.authority.intermediate != before.intermediate)
            let oldIntermediate = try await Self.post(
                try Self.request(about: after.intermediate, issuedBy: after.root), client)
            #expect(oldIntermediate.answers.map(\.status) == [.revoked(at: Self.now)])
        }
    }

    @Test(arguments: [#"{"certificate": "root"}"#, #"{"certificate": 1}"#, "{}", "not json"])
    func badRevocationsAreRefused(body: String) async throws {
        let service = try Self.makeService()
        let before = service.engine.authority
        try await Application(router: service.router()).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/control/ca/revoke", method: .post, body: ByteBuffer(string: body))
            #expect(response.status == .badRequest)
            let error = Self.object(response.body)["error"] as? [String: Any]
            #expect(error?["code"] as? String == "invalidRequest")
        }
        #expect(service.engine.authority.leaf == before.leaf)
    }

    @Test func theResponderCanBeSwitchedOff() async throws {
        let service = try Self.makeService()
        let authority = service.engine.authority
        try await Application(router: service.router()).test(.router) { client in
            let der = try Self.request(about: authority.leaf, issuedBy: authority.intermediate)
            let off = try await client.execute(
                uri: "/v1/control/ca/responder", method: .post, body: ByteBuffer(string: #"{"available": false}"#))
            #expect(off.status == .ok)
            #expect(Self.object(off.body)["responderAvailable"] as? Bool == false)
            let down = try await client.execute(uri: "/ocsp", method: .post, body: ByteBuffer(bytes: der))
            #expect(down.status == .serviceUnavailable)
            let downGet = try await client.execute(uri: "/ocsp/\(Data(der).base64EncodedString())", method: .get)
            #expect(downGet.status == .serviceUnavailable)
            _ = try await client.execute(
                uri: "/v1/control/ca/responder", method: .post, body: ByteBuffer(string: #"{"available": true}"#))
            #expect(try await Self.post(der, client).status == .successful)
        }
    }

    /// A chain is checked at the payload's signing date, which is sandbox time: new certificates
    /// are valid from before it even when the sandbox clock is behind the real one.
    @Test func newCertificatesCoverTheSandboxClockWhenItIsBehind() async throws {
        let catalog = try ExampleApp.catalog()
        let clock = SandboxClock.manual(at: Self.now)
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(now: Self.now, ocspURL: Self.ocspURL),
            clock: clock, realClock: { Self.now.addingTimeInterval(30 * 86_400) })
        let tester = try await engine.createTester(name: "behind@example.com")
        let bought = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd")).transaction)
        try await engine.revokeCertificate(.intermediate)
        #expect(engine.authority.leaf.notValidBefore <= clock.now())
        #expect(engine.authority.intermediate.notValidBefore <= clock.now())
        // swift-certificates, at the signing date, accepts the new chain.
        let signedAt = clock.now()
        let authority = engine.authority
        var verifier = Verifier(rootCertificates: CertificateStore([authority.root])) {
            RFC5280Policy(fixedExpiryValidationTime: signedAt)
        }
        let result = await verifier.validate(
            leaf: authority.leaf, intermediates: CertificateStore([authority.intermediate]))
        guard case .validCertificate = result else {
            Issue.record("the new chain is not valid at the sandbox time: \(result)")
            return
        }
        #expect(try engine.signer.signTransaction(bought, at: signedAt).split(separator: ".").count == 3)
        // The revocation itself is dated in real time, as the responder answers.
        #expect(engine.authority.revokedCertificates.first?.revocationDate == Self.now.addingTimeInterval(30 * 86_400))
    }

    @Test func aRotationIsWrittenToTheAuthoritysDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-sandbox-ca-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try SandboxCertificateAuthority.loadOrCreate(
            in: directory, ocspURL: Self.ocspURL, now: Self.now)
        let service = try Self.makeService(authority: authority, directory: directory)
        try await service.engine.revokeCertificate(.leaf)
        let reloaded = try SandboxCertificateAuthority.load(from: directory)
        #expect(reloaded.leaf == service.engine.authority.leaf)
        #expect(reloaded.revokedCertificates.map(\.certificate) == [authority.leaf])
        // And a sandbox started on another port moves its certificates to the new URL.
        try await service.engine.useOCSPURL("http://127.0.0.1:10/ocsp")
        #expect(service.engine.authority.ocspURL == "http://127.0.0.1:10/ocsp")
        #expect(try SandboxCertificateAuthority.load(from: directory).ocspURL == "http://127.0.0.1:10/ocsp")
        let leaf = service.engine.authority.leaf
        try await service.engine.useOCSPURL("http://127.0.0.1:10/ocsp")
        #expect(service.engine.authority.leaf == leaf, "nothing changes for the same URL")
    }
}

enum TestAuthorities {
    static let foreign = try! SandboxCertificateAuthority.generate(name: "Elsewhere", now: EngineFixture.start)
}
