package profiles

import (
	"strings"

	"github.com/hilrig/hilrig/profiles/lang"
)

// Flow roles let any profile run on any bench. A profile names its flows
// as it likes (m2s, command, to-remote...); it also says which of them is
// the controller's way to the plant and which the plant's way back, and a
// bench binds those roles instead of the flows' names.

// FlowRole is a flow's place between a controller and its plant.
type FlowRole string

// The roles. The controller is the side that commands (a controller under
// test, a teleoperation master, the lead of a platoon, a digital twin
// driving its robot, the local side of a remote link); the plant is the
// side commanded (the plant, the slave, the followers, the robot, the
// remote side).
const (
	ToPlant      FlowRole = "to-plant"
	ToController FlowRole = "to-controller"
)

var FlowRoles = []string{string(ToPlant), string(ToController)}

func (r *FlowRole) ParseScalar(s string) error {
	return lang.ParseEnum(r, s, "a flow role", FlowRoles...)
}

func (FlowRole) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: strings.Join(FlowRoles, " or "), Example: ""}
}

// checkRoles checks that each role is one flow's.
func (p *Profile) checkRoles(d *lang.Decoder) {
	holder := map[FlowRole]string{}
	for i, name := range p.Flows.Names {
		role := p.Flows.Values[i].Role
		if role == nil {
			continue
		}
		if other, taken := holder[*role]; taken {
			d.ErrorAt("flows."+name+".role", "flow %s already has role %s; a role is one flow's", other, *role)
			continue
		}
		holder[*role] = name
	}
}

// FlowWithRole returns the name of the flow that has role, or "".
func (p *Profile) FlowWithRole(role FlowRole) string {
	for i, f := range p.Flows.Values {
		if f.Role != nil && *f.Role == role {
			return p.Flows.Names[i]
		}
	}
	return ""
}
