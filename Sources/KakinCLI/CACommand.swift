import AppStoreSecurity
import AppStoreTesting
import ArgumentParser
import Foundation

/// `kakin ca`: the sandbox certificate authority.
struct CACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca", abstract: "Make a certificate authority shaped like Apple's, for the sandbox.",
        subcommands: [Create.self])

    struct Create: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a root, an intermediate and a leaf (with keys) in a directory.",
            discussion: """
                The leaf carries Apple's receipt-signer marker (1.2.840.113635.100.6.11.1) and the \
                intermediate the WWDR marker (1.2.840.113635.100.6.2.1), so Apple's own verifiers accept \
                what the leaf signs when they are given root.pem (or root.cer) as the trusted root.
                """)

        @Option(name: .long, help: "The directory to write into (created if needed).")
        var out: String

        @Option(name: .long, help: "The organisation named in the certificates.")
        var name: String = "Kakin Sandbox"

        @Flag(name: .long, help: "Replace an authority already in the directory.")
        var force = false

        func run() async throws { try await emit() }

        func produceOutput() async -> CommandOutput {
            let directory = URL(fileURLWithPath: out)
            let existing = directory.appendingPathComponent(SandboxCertificateAuthority.FileName.root)
            if !force, FileManager.default.fileExists(atPath: existing.path) {
                return .failure("error: \(out) already holds a certificate authority; pass --force to replace it")
            }
            do {
                let authority = try SandboxCertificateAuthority.generate(name: name)
                try authority.write(to: directory)
                let files = [
                    SandboxCertificateAuthority.FileName.root, SandboxCertificateAuthority.FileName.rootDER,
                    SandboxCertificateAuthority.FileName.intermediate, SandboxCertificateAuthority.FileName.leaf,
                    SandboxCertificateAuthority.FileName.leafKey,
                ]
                return CommandOutput(
                    standardOutput: "Created a certificate authority in \(out): "
                        + files.joined(separator: ", ")
                        + " (and the CA keys). Trust \(out)/root.pem to verify what it signs.")
            } catch {
                return .failure("error: cannot create the authority in \(out): \(error)")
            }
        }
    }
}
