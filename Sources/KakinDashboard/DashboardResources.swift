import Foundation
import KakinServer

/// The dashboard's Mustache templates, resource files of this module (`Resources/Dashboard`).
enum DashboardResources {
    /// The templates by name (`layout`, `login`, `overview`, …).
    static func templates() throws(ServerError) -> [String: String] {
        var templates: [String: String] = [:]
        for name in ["layout", "login", "overview", "customers", "customer", "activity", "sandbox", "message"] {
            templates[name] = try ServerResources.text("Dashboard/\(name).mustache", module: "KakinDashboard")
        }
        return templates
    }
}

extension DashboardResources {
    /// The style sheet.
    static func css() throws(ServerError) -> String {
        try ServerResources.text("Dashboard/dashboard.css", module: "KakinDashboard")
    }
}
