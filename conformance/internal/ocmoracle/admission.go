package ocmoracle

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	clusterapiv1 "open-cluster-management.io/api/cluster/v1"
	clusterapiv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterapiv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterapiv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"open-cluster-management.io/ocm/manifests"
)

// The hub CRDs ship inside the upstream module; the scheduler only ever sees objects the API server
// admitted, so every manifest gets what the API server does with these CRDs first: the served
// version only, and the schema's defaults (a prioritizer weight left out is 1, not 0). The schema's
// validation is left to the case generator, which writes valid objects only.
const (
	clusterGroup = "clusters.open-cluster-management.io"
	hubCRDFolder = "cluster-manager/hub"
)

// kindSchema is the one served version of a kind and what the API server applies on create.
type kindSchema struct {
	apiVersion string
	namespaced bool
	structural *structuralschema.Structural
	newObject  func() runtime.Object
}

// defaultNamespace is where kubectl (and `manage.py schedule -f`) puts a namespaced object whose
// manifest names no namespace.
const defaultNamespace = "default"

// newObjects maps the kinds the scheduling controller reads to their Go types.
var newObjects = map[string]func() runtime.Object{
	"ManagedCluster":           func() runtime.Object { return &clusterapiv1.ManagedCluster{} },
	"ManagedClusterSet":        func() runtime.Object { return &clusterapiv1beta2.ManagedClusterSet{} },
	"ManagedClusterSetBinding": func() runtime.Object { return &clusterapiv1beta2.ManagedClusterSetBinding{} },
	"Placement":                func() runtime.Object { return &clusterapiv1beta1.Placement{} },
	"PlacementDecision":        func() runtime.Object { return &clusterapiv1beta1.PlacementDecision{} },
	"AddOnPlacementScore":      func() runtime.Object { return &clusterapiv1alpha1.AddOnPlacementScore{} },
}

var (
	schemasOnce sync.Once
	schemas     map[string]kindSchema
	schemasErr  error
)

// kindSchemas reads the upstream CRDs once per process.
func kindSchemas() (map[string]kindSchema, error) {
	schemasOnce.Do(func() { schemas, schemasErr = loadKindSchemas() })
	return schemas, schemasErr
}

func loadKindSchemas() (map[string]kindSchema, error) {
	paths, err := fs.Glob(manifests.ClusterManagerManifestFiles, hubCRDFolder+"/*"+clusterGroup+"_*.crd.yaml")
	if err != nil {
		return nil, err
	}
	result := map[string]kindSchema{}
	for _, path := range paths {
		data, err := manifests.ClusterManagerManifestFiles.ReadFile(path)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		newObject, used := newObjects[crd.Spec.Names.Kind]
		if !used {
			continue
		}
		for _, version := range crd.Spec.Versions {
			if !version.Served || version.Schema == nil {
				continue
			}
			schema, err := kindSchemaOf(crd.Spec.Group+"/"+version.Name, version.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", path, version.Name, err)
			}
			schema.newObject = newObject
			schema.namespaced = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
			result[crd.Spec.Names.Kind] = schema
		}
	}
	for kind := range newObjects {
		if _, found := result[kind]; !found {
			return nil, fmt.Errorf("no served CRD version of %s in the upstream manifests", kind)
		}
	}
	return result, nil
}

func kindSchemaOf(apiVersion string, props *apiextensionsv1.JSONSchemaProps) (kindSchema, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return kindSchema{}, err
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return kindSchema{}, err
	}
	return kindSchema{apiVersion: apiVersion, structural: structural}, nil
}

// admit turns one manifest into the typed object the API server would store, or says why the API
// server would refuse it. Kinds the scheduling controller does not read give (nil, nil).
func admit(raw json.RawMessage) (runtime.Object, error) {
	known, err := kindSchemas()
	if err != nil {
		return nil, err
	}
	// integral numbers become int64 here, as the API server reads them
	var content map[string]any
	if err := utiljson.Unmarshal(raw, &content); err != nil {
		return nil, fmt.Errorf("a manifest is not a JSON object: %w", err)
	}
	kind, _ := content["kind"].(string)
	apiVersion, _ := content["apiVersion"].(string)
	schema, found := known[kind]
	if !found {
		return nil, nil
	}
	name := describe(kind, content)
	if apiVersion != schema.apiVersion {
		return nil, fmt.Errorf("%s: apiVersion %q is not served (the hub serves %s)", name, apiVersion, schema.apiVersion)
	}
	if schema.namespaced {
		setDefaultNamespace(content)
	}
	applyDefaults(content, schema.structural)
	object := schema.newObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, object); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return object, nil
}

// setDefaultNamespace gives a namespaced manifest without metadata.namespace the default namespace, as
// kubectl does when it creates the object; our side reads such manifests the same way.
func setDefaultNamespace(content map[string]any) {
	metadata, _ := content["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		content["metadata"] = metadata
	}
	if namespace, _ := metadata["namespace"].(string); namespace == "" {
		metadata["namespace"] = defaultNamespace
	}
}

func describe(kind string, content map[string]any) string {
	metadata, _ := content["metadata"].(map[string]any)
	namespace, _ := metadata["namespace"].(string)
	name, _ := metadata["name"].(string)
	return kind + " " + strings.TrimPrefix(namespace+"/"+name, "/")
}

// applyDefaults fills what the API server's structural-schema defaulting fills on create: a field
// that is absent, or null without being nullable, takes the schema's default, at every depth.
func applyDefaults(value any, schema *structuralschema.Structural) {
	if schema == nil {
		return
	}
	switch value := value.(type) {
	case map[string]any:
		for key, property := range schema.Properties {
			if property.Default.Object != nil && needsDefault(value, key, &property) {
				value[key] = runtime.DeepCopyJSONValue(property.Default.Object)
			}
		}
		for key, item := range value {
			if property, found := schema.Properties[key]; found {
				applyDefaults(item, &property)
				continue
			}
			if schema.AdditionalProperties != nil {
				nested := schema.AdditionalProperties.Structural
				if nested != nil && nested.Default.Object != nil && needsDefault(value, key, nested) {
					value[key] = runtime.DeepCopyJSONValue(nested.Default.Object)
				}
				applyDefaults(value[key], nested)
			}
		}
	case []any:
		for index := range value {
			if schema.Items != nil && schema.Items.Default.Object != nil && value[index] == nil &&
				!schema.Items.Nullable {
				value[index] = runtime.DeepCopyJSONValue(schema.Items.Default.Object)
			}
			applyDefaults(value[index], schema.Items)
		}
	}
}

func needsDefault(object map[string]any, key string, schema *structuralschema.Structural) bool {
	current, found := object[key]
	return !found || current == nil && !schema.Nullable
}
