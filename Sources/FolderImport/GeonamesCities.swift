// Every city of Debian's libgeonames (GeoNames' cities of 15,000 people or more, built into the library).
import CGeonames
import Foundation

public enum GeonamesCities {
    /// All cities, read once per process (24,361 in libgeonames 0.3: 20 ms).
    public static let all: [City] = {
        let count = Int(geonames_get_n_cities())
        var cities: [City] = []
        cities.reserveCapacity(max(0, count))
        for index in 0..<max(0, count) {
            guard let city = geonames_get_city(Int32(index)) else { continue }
            defer { geonames_city_free(city) }
            func text(_ value: UnsafePointer<gchar>?) -> String { value.map { String(cString: $0) } ?? "" }
            cities.append(City(name: text(geonames_city_get_name(city)), state: text(geonames_city_get_state(city)),
                               country: text(geonames_city_get_country(city)),
                               timezone: text(geonames_city_get_timezone(city)),
                               latitude: geonames_city_get_latitude(city), longitude: geonames_city_get_longitude(city)))
        }
        return cities
    }()
}
