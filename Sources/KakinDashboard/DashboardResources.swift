import Foundation
import KakinServer
import KakinLedger

/// The dashboard's Mustache templates and style sheet, resource files of this module
/// (`Resources/Dashboard`).
enum DashboardResources {
    /// The templates by name (`layout`, `login`, `overview`, …).
    static func templates() throws(ServerError) -> [String: String] {
        var templates: [String: String] = [:]
        let names = [
            "layout", "login", "overview", "customers", "customer", "activity", "retention", "retention-messages",
            "sandbox", "message",
        ]
        for name in names {
            templates[name] = try text("\(name).mustache")
        }
        return templates
    }

    /// The style sheet.
    static func css() throws(ServerError) -> String { try text("dashboard.css") }

    private static func text(_ name: String) throws(ServerError) -> String {
        try ServerResources.text("Dashboard/\(name)", module: "KakinDashboard")
    }
}
