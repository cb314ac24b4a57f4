import AppStoreModels
import AppStoreSecurity
import ArgumentParser
import Foundation
import X509

/// `kakin receipt`: app receipts.
struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt", abstract: "Inspect PKCS#7 app receipts.", subcommands: [Inspect.self])

    struct Inspect: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an app receipt as JSON, with whether its signature and chain verified.",
            discussion: """
                Reads base64 text or DER/BER bytes. Exit status 0 when the receipt parses (the JSON says \
                whether it verified and, if not, why); 1 when it is not a receipt. Without --root, \
                Apple's roots are trusted. The chain is checked at the receipt's creation date unless \
                --at gives another time.
                """)

        @Option(name: .customLong("root"), help: "A trusted root certificate (DER or PEM); repeatable.")
        var roots: [String] = []

        @Flag(name: .customLong("trust-xcode"), help: "Accept Xcode's self-signed StoreKit testing certificate.")
        var trustsXcode = false

        @Option(name: .customLong("bundle-id"), help: "The bundle ID the receipt must carry.")
        var bundleID: String?

        @Option(
            name: .customLong("device-id"),
            help: "The device's identifierForVendor (UUID), to check the receipt's hash.")
        var deviceID: String?

        @Option(help: "Check the chain at this ISO 8601 time instead of the receipt's creation date.")
        var at: String?

        @Argument(help: "A receipt file (base64 or DER), or - for standard input.")
        var file: String

        func run() async throws { try await emit() }

        func validate() throws {
            if let deviceID, UUID(uuidString: deviceID) == nil {
                throw ValidationError("--device-id must be a UUID; found \(deviceID)")
            }
            if let at, ISO8601.parse(at) == nil {
                throw ValidationError("--at must be an ISO 8601 time such as 2024-05-01T12:00:00Z; found \(at)")
            }
        }

        func produceOutput() async -> CommandOutput {
            let signed: SignedAppReceipt
            var rootCertificates: [Certificate] = []
            do {
                let data = try InputFile.read(file)
                for path in roots {
                    rootCertificates.append(try Certificate.load(derOrPEM: try InputFile.read(path)))
                }
                if let text = String(data: data, encoding: .utf8), text.allSatisfy({ $0.isASCII }) {
                    signed = try SignedAppReceipt(base64Encoded: text)
                } else {
                    signed = try SignedAppReceipt(bytes: data)
                }
            } catch let error as InputFile.Failure {
                return .failure("error: \(error)")
            } catch {
                return .failure("error: \(error)")
            }
            if rootCertificates.isEmpty {
                rootCertificates = AppleRootCertificates.receiptRoots + AppleRootCertificates.jwsRoots
            }
            let report = Report(signed: signed, verification: await verify(signed, roots: rootCertificates))
            return CommandOutput(standardOutput: PrettyJSON.string(encoding: report))
        }

        private func verify(_ signed: SignedAppReceipt, roots: [Certificate]) async -> Report.Verification {
            do {
                let result = try await signed.verify(
                    roots: roots, at: at.flatMap(ISO8601.parse), trustsXcodeSigning: trustsXcode, bundleID: bundleID,
                    deviceIdentifier: deviceID.flatMap(UUID.init(uuidString:)).map(AppReceipt.deviceIdentifier(from:)))
                return Report.Verification(
                    valid: true, signatureVerified: result.signatureVerified, chainVerified: result.chainVerified,
                    trust: result.chainVerified ? "certificate chain" : "Xcode self-signed certificate",
                    root: result.root.map { "\($0.subject)" }, validationTime: result.validationTime,
                    deviceHashVerified: deviceID == nil ? nil : result.deviceHashVerified, failure: nil)
            } catch {
                let signatureFailed = error.code == .badSignature || error.code == .wrongAlgorithm
                return Report.Verification(
                    valid: false, signatureVerified: signatureFailed ? false : nil, chainVerified: false, trust: nil,
                    root: nil, validationTime: nil, deviceHashVerified: error.code == .deviceHashMismatch ? false : nil,
                    failure: .init(
                        code: "\(error.code)", reason: error.reason, expected: error.expected, found: error.found))
            }
        }
    }

    /// What `kakin receipt inspect` prints.
    struct Report: Encodable {
        struct Verification: Encodable {
            struct Failure: Encodable {
                let code: String
                let reason: String
                let expected: String?
                let found: String?
            }
            let valid: Bool
            /// `nil` when the check stopped before the signature was examined.
            let signatureVerified: Bool?
            let chainVerified: Bool
            let trust: String?
            let root: String?
            let validationTime: Date?
            let deviceHashVerified: Bool?
            let failure: Failure?
        }

        let receipt: AppReceipt
        let certificates: [String]
        let digestAlgorithm: String
        let verification: Verification

        init(signed: SignedAppReceipt, verification: Verification) {
            receipt = signed.receipt
            certificates = signed.certificates.map { "\($0.subject)" }
            digestAlgorithm = "\(signed.digestAlgorithm)"
            self.verification = verification
        }
    }
}
