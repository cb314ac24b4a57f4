import AppStoreModels
import ArgumentParser
import Foundation
import StoreSandbox

/// `kakin catalog`: Xcode `.storekit` catalogs.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Check Xcode .storekit catalogs.", subcommands: [Lint.self])

    struct Lint: AsyncParsableCommand, OutputProducingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a .storekit file against App Store Connect's rules for registering products.",
            discussion: """
                Prints one line per problem: `FILE: error|warning: PRODUCT (JSON PATH): message`. Errors \
                are what App Store Connect refuses: empty, duplicate or malformed product IDs (letters, \
                digits, underscores and periods only), a product without a price, a localization without \
                a display name or with a description under 10 characters, hosted content on anything but a \
                non-consumable, subscriptions without a level or sharing one in their group. With a bundle \
                ID, product IDs that do not start with it are warnings. Hosted content and the bundle ID \
                are read from the .catalog.json side file next to FILE when there is one. Exit status 1 \
                when there is an error, 0 otherwise.
                """)

        @Option(
            name: .customLong("bundle-id"),
            help: "The app's bundle ID; product IDs should start with it (default: the side file's).")
        var bundleID: String?

        @Option(help: "The catalog side file (default: FILE's name with .catalog.json, when it exists).")
        var options: String?

        @Argument(help: "A .storekit file, or - for standard input.")
        var file: String

        func run() async throws { try await emit() }

        func produceOutput() async -> CommandOutput {
            let configuration: StoreKitConfiguration
            let sideFile: CatalogOptions?
            do {
                configuration = try StoreKitConfiguration.load(from: try InputFile.read(file))
            } catch let failure as InputFile.Failure {
                return .failure("error: \(failure)")
            } catch {
                return .failure("error: \(file) is not a .storekit catalog: \(Self.describe(error))")
            }
            do { sideFile = try loadSideFile() } catch { return .failure("error: \(Self.describe(error))") }
            let lint = StoreKitConfigurationLint(
                bundleID: bundleID ?? sideFile?.bundleID,
                hostedContentProductIDs: Set(sideFile?.hostedContent.keys ?? [:].keys))
            let problems = lint.problems(in: configuration)
            let errors = problems.filter { $0.severity == .error }.count
            let warnings = problems.count - errors
            let summary =
                problems.isEmpty
                ? "\(file): no problems"
                : "\(file): \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
            return CommandOutput(
                standardOutput: problems.map { "\(file): \($0)" }.joined(separator: "\n"),
                standardError: summary, exitCode: errors > 0 ? 1 : 0)
        }

        /// A decoding error as one line: where in the JSON, and what was wrong.
        static func describe(_ error: any Error) -> String {
            guard let decoding = error as? DecodingError else { return "\(error)" }
            let context: DecodingError.Context
            switch decoding {
            case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found),
                .dataCorrupted(let found):
                context = found
            @unknown default:
                return "\(error)"
            }
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            let underlying = context.underlyingError.flatMap {
                ($0 as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            }
            return [
                path.isEmpty ? nil : "at \(path.hasPrefix(".") ? String(path.dropFirst()) : path)",
                context.debugDescription, underlying,
            ]
            .compactMap { $0 }.joined(separator: ": ")
        }

        private func loadSideFile() throws -> CatalogOptions? {
            if let options {
                return try CatalogOptions.load(from: try InputFile.read(options))
            }
            guard file != "-" else { return nil }
            let url = CatalogOptions.sideFileURL(for: URL(fileURLWithPath: file))
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return try CatalogOptions.load(from: try InputFile.read(url.path))
        }
    }
}
