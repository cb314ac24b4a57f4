import Foundation

/// Reads the resource files a module ships in the bundle the package manager builds beside the
/// `kakin` binary (`Kakin_KakinServer.resources` holds the OpenAPI document,
/// `Kakin_KakinDashboard.resources` the dashboard's templates and style sheet).
///
/// A server installed by copying the binary must get those bundles beside it too (see the
/// Deploying article): without the dashboard's, the server stops at start naming the file it could
/// not read; without the server's, `/openapi.yaml` answers 404.
package enum ServerResources {
    /// The text of `Resources/<path>` in `bundle`.
    package static func text(_ path: String, in bundle: Bundle) throws(ServerError) -> String {
        let file = URL(fileURLWithPath: "Resources/" + path)
        let directory = file.deletingLastPathComponent().relativePath
        guard
            let url = bundle.url(
                forResource: file.deletingPathExtension().lastPathComponent, withExtension: file.pathExtension,
                subdirectory: directory),
            let data = FileManager.default.contents(atPath: url.path)
        else {
            throw ServerError(
                .invalidConfiguration,
                "the resource Resources/\(path) cannot be read: install the \(bundle.bundleURL.lastPathComponent) "
                    + "bundle beside the kakin binary")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The text of `Resources/<path>` in KakinServer's own bundle.
    static func text(_ path: String) throws(ServerError) -> String {
        try text(path, in: Bundle.module)
    }
}
