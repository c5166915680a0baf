import TrustModel
import TrustCore
import Foundation
import Hummingbird
import NIOCore

/// Doors as phones saw them (docs/trust-openapi.json):
///
///   POST /v1/doors/{id}/reports   a phone, after a tap (bearer)   {"door","decision","at","revocationDelivered",…} → 201 the door
///
/// `{id}` is the door `GROUP:SUB` and must be the report's; 400 invalid_request for a report that
/// does not parse, 403 forbidden for a door the phone's user holds no active grant on, 429
/// too_many_pending once the site keeps `DoorRecord.maxDoors` doors. Operators read doors at
/// `GET /v1/admin/doors/{id}` (`TrustAPI+Admin`).
extension TrustAPI {
    static func addDoorRoutes(to router: RouterGroup<TrustRequestContext>, service: TrustService) {
        router.post("/v1/doors/:id/reports") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await answer(service, request, context) { device, body in
                let report = try DoorReport(parsing: Data(buffer: body))
                guard report.door == id else { throw TrustError(.invalidRequest, "the report names door \(report.door), the path \(id.prefix(80))") }
                return json(try await service.reportDoor(device: device, report), status: .created)
            }
        }
    }
}
