import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import ArgumentParser
import Foundation
import X509

/// `kakin jws`: decode, sign and verify App Store JWS.
struct JWSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws", abstract: "Decode, sign and verify App Store signed data (JWS).",
        subcommands: [Decode.self, Sign.self, Verify.self])

    struct Decode: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a JWS's header and payload as JSON, without verifying anything.")

        @Argument(help: "A file holding a compact JWS, or - for standard input.")
        var file: String

        func run() async throws { try await emit() }

        func produceOutput() async -> CommandOutput {
            do {
                let jws = try CompactJWS(try InputFile.readText(file))
                let header = try jws.headerData()
                let payload = try jws.payloadData()
                guard let headerObject = try? JSONSerialization.jsonObject(with: header),
                    let payloadObject = try? JSONSerialization.jsonObject(with: payload)
                else {
                    return .failure("error: malformedInput: the header or the payload is not JSON")
                }
                return CommandOutput(
                    standardOutput: PrettyJSON.string(from: ["header": headerObject, "payload": payloadObject]) ?? "")
            } catch let error as InputFile.Failure {
                return .failure("error: \(error)")
            } catch {
                return .failure("error: \(error)")
            }
        }
    }

    struct Sign: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a JSON payload with a certificate authority made by `kakin ca create`.")

        @Option(name: .long, help: "The directory of the certificate authority.")
        var ca: String

        @Argument(help: "A JSON file holding the payload, or - for standard input.")
        var payload: String

        func run() async throws { try await emit() }

        func produceOutput() async -> CommandOutput {
            let data: Data
            do { data = try InputFile.read(payload) } catch { return .failure("error: \(error)") }
            guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                return .failure("error: malformedInput: \(payload) is not a JSON object")
            }
            do {
                let authority = try SandboxCertificateAuthority.load(from: URL(fileURLWithPath: ca))
                return CommandOutput(
                    standardOutput: try JWSSigner(identity: authority.signingIdentity).sign(payload: data))
            } catch let error as AppStoreSecurityError {
                return .failure("error: \(error)")
            } catch {
                return .failure("error: cannot sign: \(error)")
            }
        }
    }

    struct Verify: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a JWS as Apple's verifier does; print its payload when valid.",
            discussion: """
                Exit status 0 and the decoded payload when valid; 1 and one line naming the failure \
                code when not. Without --root, Apple Root CA - G3 is the only trusted root. The chain \
                is checked at the payload's signedDate (Apple's leaf certificates expire) unless --at \
                gives another time. --environment Xcode is the explicit opt-in to Xcode's self-signed \
                StoreKit testing certificate. --revocation require (or bestEffort) checks the leaf and \
                the intermediate with OCSP at the responders they name and the chain at the current \
                time, as Apple's libraries do with online checks.
                """)

        @Option(name: .customLong("root"), help: "A trusted root certificate (DER or PEM); repeatable.")
        var roots: [String] = []

        @Option(name: .customLong("bundle-id"), help: "The app's bundle ID the payload must carry.")
        var bundleID: String?

        @Option(name: .customLong("app-apple-id"), help: "The app's App Store ID (checked in Production).")
        var appAppleID: Int64?

        @Option(help: "The environment the payload must come from: Sandbox, Production or Xcode.")
        var environment: String?

        @Option(help: "Check the chain at this ISO 8601 time instead of the payload's signing date.")
        var at: String?

        @Option(help: "OCSP revocation checks: require, bestEffort or off (default off).")
        var revocation: String = "off"

        @Argument(help: "A file holding a compact JWS, or - for standard input.")
        var file: String

        func run() async throws { try await emit() }

        func validate() throws {
            if let environment, !["Sandbox", "Production", "Xcode"].contains(environment) {
                throw ValidationError("--environment must be Sandbox, Production or Xcode; found \(environment)")
            }
            if let at, ISO8601.parse(at) == nil {
                throw ValidationError("--at must be an ISO 8601 time such as 2024-05-01T12:00:00Z; found \(at)")
            }
            if RevocationMode(rawValue: revocation) == nil {
                throw ValidationError("--revocation must be require, bestEffort or off; found \(revocation)")
            }
        }

        func produceOutput() async -> CommandOutput {
            let text: String
            var rootCertificates: [Certificate] = []
            do {
                text = try InputFile.readText(file)
                for path in roots {
                    rootCertificates.append(try Certificate.load(derOrPEM: try InputFile.read(path)))
                }
            } catch let error as InputFile.Failure {
                return .failure("error: \(error)")
            } catch {
                return .failure("error: \(error)")
            }
            if rootCertificates.isEmpty { rootCertificates = AppleRootCertificates.jwsRoots }
            let expectedEnvironment = environment.map(AppStoreEnvironment.init(rawValue:))
            let verifier = JWSVerifier(
                rootCertificates: rootCertificates, trustsXcodeSigning: expectedEnvironment == .xcode,
                revocation: RevocationChecker(mode: RevocationMode(rawValue: revocation) ?? .off))
            do {
                let compact = try CompactJWS(text)
                let verified = try await verifier.verify(
                    compact, decoded: try compact.decodePayload(as: SignedClaims.self), at: at.flatMap(ISO8601.parse))
                try SignedDataVerifier.check(
                    verified.payload, checks: verified.payload.checks, bundleID: bundleID, appAppleID: appAppleID,
                    environment: expectedEnvironment)
                return CommandOutput(standardOutput: PrettyJSON.string(fromJSON: try compact.payloadData()) ?? "")
            } catch {
                return .failure("invalid: \(error)")
            }
        }
    }
}

enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}
