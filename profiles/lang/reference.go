package lang

import (
	"fmt"
	"reflect"
	"strings"
)

// ReferenceOf documents every schema struct reachable from root.
func ReferenceOf(root reflect.Type, top string) string {
	// First find every schema struct and the paths that lead to it, so a
	// type reached by several keys (on and off) is documented once.
	var order []reflect.Type
	paths := map[reflect.Type][]string{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		if _, seen := paths[t]; !seen {
			order = append(order, t)
		}
		paths[t] = append(paths[t], path)
		if len(paths[t]) > 1 {
			return
		}
		for _, f := range FieldsOf(t) {
			if inner, sub := structInside(f.Type, path, f.Name); inner != nil {
				walk(sub, inner)
			}
		}
	}
	walk("", root)

	var b strings.Builder
	for _, t := range order {
		title := top
		if p := paths[t]; p[0] != "" {
			title = "`" + strings.Join(p, "`, `") + "`"
		}
		fmt.Fprintf(&b, "### %s\n\n", title)
		if _, alternatives := reflect.New(t).Interface().(OneOf); alternatives {
			b.WriteString("Exactly one of:\n\n")
		}
		b.WriteString("| key | value | default | meaning |\n|---|---|---|---|\n")
		for _, f := range FieldsOf(t) {
			def := f.Default
			if f.Required {
				def = "required"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, typeInfoOf(f.Type).want(), def, f.Doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// structInside returns the schema struct a field's value is made of (through
// pointers, lists and named maps) and the path that names it; nil for values
// written as scalars.
func structInside(t reflect.Type, parent, key string) (reflect.Type, string) {
	path := Join(parent, key)
	for {
		if _, scalar := reflect.New(t).Interface().(ScalarParser); scalar {
			return nil, ""
		}
		if m, ok := reflect.New(t).Interface().(interface{ ElemType() reflect.Type }); ok {
			t, path = m.ElemType(), path+".NAME"
			continue
		}
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
			continue
		case reflect.Slice:
			t, path = t.Elem(), path+"[]"
			continue
		case reflect.Struct:
			return t, path
		}
		return nil, ""
	}
}
