import Foundation
import KakinLedger

/// Reads the resource files a module ships in the bundle the package manager builds beside the
/// `kakin` binary (`Kakin_KakinServer.resources` holds the OpenAPI document,
/// `Kakin_KakinDashboard.resources` the dashboard's templates and style sheet).
///
/// A server installed by copying the binary must get those bundles beside it too (see the
/// Deploying article): without the dashboard's, the server stops at start with one line naming
/// the file it could not read; without the server's, `/openapi.yaml` answers 404. The bundle is
/// looked for beside the running executable, then, on a machine that has the package's sources
/// (tests, `swift run`), in the module's own `Resources` folder. Unlike the package manager's
/// `Bundle.module`, a missing bundle is a typed error, never a crash.
package enum ServerResources {
    /// The text of `Resources/<path>` of `module`, whose source folder holds `sourceFile`.
    package static func text(_ path: String, module: String, sourceFile: String = #filePath) throws(ServerError) -> String {
        for base in bases(module: module, sourceFile: sourceFile) {
            if let data = FileManager.default.contents(atPath: base.appendingPathComponent(path).path) {
                return String(decoding: data, as: UTF8.self)
            }
        }
        throw ServerError(
            .invalidConfiguration,
            "the resource Resources/\(path) cannot be read: install the Kakin_\(module).resources bundle beside the kakin binary")
    }

    /// The text of `Resources/<path>` of KakinServer.
    static func text(_ path: String) throws(ServerError) -> String {
        try text(path, module: "KakinServer")
    }

    /// Where `module`'s `Resources` folder may be: in its bundle beside the executable, then in
    /// its source folder.
    private static func bases(module: String, sourceFile: String) -> [URL] {
        let directory = Bundle.main.bundleURL
        var bases: [URL] = []
        for name in ["Kakin_\(module).resources", "Kakin_\(module).bundle"] {
            let bundle = directory.appendingPathComponent(name)
            #if canImport(Darwin)
            if let resources = Bundle(url: bundle)?.resourceURL {
                bases.append(resources.appendingPathComponent("Resources"))
            }
            #endif
            bases.append(bundle.appendingPathComponent("Resources"))
        }
        bases.append(URL(fileURLWithPath: sourceFile).deletingLastPathComponent().appendingPathComponent("Resources"))
        return bases
    }
}
