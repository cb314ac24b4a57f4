import Foundation

/// The server's resource files, in the `Kakin_KakinServer.resources` bundle that the package
/// manager builds beside the `kakin` binary: the OpenAPI document (`Resources/openapi.yaml`) and
/// the dashboard's Mustache templates and style sheet (`Resources/Dashboard`).
///
/// A server installed by copying the binary must get that bundle beside it too (see the
/// Deploying article); without it the server stops at start, naming the file it could not read.
enum ServerResources {
    /// The text of `Resources/<path>`.
    static func text(_ path: String) throws(ServerError) -> String {
        let file = URL(fileURLWithPath: "Resources/" + path)
        let directory = file.deletingLastPathComponent().relativePath
        guard
            let url = Bundle.module.url(
                forResource: file.deletingPathExtension().lastPathComponent, withExtension: file.pathExtension,
                subdirectory: directory),
            let data = FileManager.default.contents(atPath: url.path)
        else {
            throw ServerError(
                .invalidConfiguration,
                "the resource Resources/\(path) cannot be read: install the Kakin_KakinServer.resources bundle beside the kakin binary")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The dashboard's templates by name (`layout`, `login`, `overview`, …): every `.mustache` file
    /// of `Resources/Dashboard`.
    static func dashboardTemplates() throws(ServerError) -> [String: String] {
        var templates: [String: String] = [:]
        for name in ["layout", "login", "overview", "customers", "customer", "activity", "sandbox", "message"] {
            templates[name] = try text("Dashboard/\(name).mustache")
        }
        return templates
    }
}
